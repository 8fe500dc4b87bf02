package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// The current state is one of --base, --kubeconfig and --live; the
// flags about one of them are refused with another.
func TestCheckCurrentStateFlags(t *testing.T) {
	const grow = "testdata/check/grow/"
	exactlyOne := "give exactly one of --base (offline), --kubeconfig FILE and --live (the live cluster)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--base", grow + "base", "--live"}, exactlyOne},
		{[]string{"--kubeconfig", "k", "--live"}, exactlyOne},
		{[]string{"--base", grow + "base", "--kubeconfig", "k", "--live"}, exactlyOne},
		{[]string{"--live", "--allow-new"}, "--allow-new is about --base; with --kubeconfig or --live the cluster says what is new"},
		{[]string{"--base", grow + "base", "--context", "prod"}, "--context picks a context of the kubeconfig: give it with --kubeconfig or --live, not --base"},
	} {
		code, out := runCheckCLI(t, nil, append([]string{"-f", grow + "pr"}, c.args...)...)
		if code != exitCheckInput || !strings.Contains(out, "claimwarden: "+c.want+"\nRun 'claimwarden check --help' for usage.") {
			t.Errorf("exit code %d, want %d and the usage error %q:\n%s", code, exitCheckInput, c.want, out)
		}
	}
}

// --live finds the kubeconfig as kubectl does: $KUBECONFIG here, its
// current context unless --context names another. The servers listen on
// no port, so check ends naming the one it tried.
func TestCheckLiveFindsTheKubeconfig(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster
	t.Setenv("HOME", t.TempDir())           // no ~/.kube/config
	kubeconfig := writeFile(t, "config", `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
- name: two
  cluster: {server: "https://127.0.0.1:2", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: one
  context: {cluster: one, user: u}
- name: two
  context: {cluster: two, user: u}
current-context: one
`)
	t.Setenv("KUBECONFIG", kubeconfig)
	pr := "testdata/check/grow/pr"
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--live"}, "https://127.0.0.1:1/", "127.0.0.1:2"},
		{[]string{"--live", "--context", "two"}, "https://127.0.0.1:2/", "127.0.0.1:1"},
		// --kubeconfig reads its file alone, and honours --context too.
		{[]string{"--kubeconfig", kubeconfig, "--context", "two"}, "https://127.0.0.1:2/", "127.0.0.1:1"},
		{[]string{"--live", "--context", "three"}, `context "three" does not exist`, "127.0.0.1"},
	} {
		code, out := runCheckCLI(t, nil, append([]string{"-f", pr}, c.args...)...)
		if code != exitCheckInput || !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("check %v: exit code %d, want %d, an error naming %q and not %q:\n%s", c.args, code, exitCheckInput, c.want, c.not, out)
		}
	}

	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	code, out := runCheckCLI(t, nil, "-f", pr, "--live")
	if want := "--live: no kubeconfig in $KUBECONFIG or ~/.kube/config, and not running in a cluster"; code != exitCheckInput || !strings.Contains(out, want) {
		t.Errorf("check --live without a kubeconfig: exit code %d, want %d and %q:\n%s", code, exitCheckInput, want, out)
	}
}
