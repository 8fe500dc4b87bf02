package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-viper/mapstructure/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"
)

// inPod makes podNamespace return ns for the rest of the test.
func inPod(t *testing.T, ns string) {
	t.Helper()
	old := namespaceFile
	t.Cleanup(func() { namespaceFile = old })
	namespaceFile = filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(namespaceFile, []byte(ns+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

const gitStatusFile = `
gitStatus:
  contextPrefix: claimwarden/prod-eu
  targetURL: https://rollouts.example.com/
  hosts:
  - url: https://github.com
    type: github
    tokenSecretRef:
      namespace: git
      name: github-token
      key: pat
  - URL: https://github.example.com
    Type: github
    GitHubApp:
      AppID: 12345
      installationID: 6789012
      privateKeySecretRef:
        name: github-app
  - url: https://gitlab.example.com:8443
    type: gitlab
    tokenSecretRef: {name: gitlab}
  - url: http://gitea.internal
    type: gitea
    tokenSecretRef: {name: gitea, key: api-token}
  - url: https://bitbucket.org
    type: bitbucket-cloud
    tokenSecretRef: {name: bitbucket}
  - url: https://bitbucket.example.com/scm
    type: bitbucket-server
    tokenSecretRef: {name: bitbucket-server}
`

// TestLoadGitStatus loads every gitStatus key: Secret references that name no
// namespace or key get the Pod's namespace and the default key, explicit
// values are kept, and keys inside host entries are case-insensitive.
func TestLoadGitStatus(t *testing.T) {
	inPod(t, "ops")
	c, err := Load(parsedFlags(t), writeConfig(t, gitStatusFile), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := GitStatus{
		ContextPrefix: "claimwarden/prod-eu",
		TargetURL:     "https://rollouts.example.com/",
		Hosts: []GitHost{{
			URL:            "https://github.com",
			Type:           "github",
			TokenSecretRef: &SecretKeyRef{Namespace: "git", Name: "github-token", Key: "pat"},
		}, {
			URL:  "https://github.example.com",
			Type: "github",
			GitHubApp: &GitHubApp{
				AppID:               12345,
				InstallationID:      6789012,
				PrivateKeySecretRef: SecretKeyRef{Namespace: "ops", Name: "github-app", Key: "privateKey"},
			},
		}, {
			URL:            "https://gitlab.example.com:8443",
			Type:           "gitlab",
			TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "gitlab", Key: "token"},
		}, {
			URL:            "http://gitea.internal",
			Type:           "gitea",
			TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "gitea", Key: "api-token"},
		}, {
			URL:            "https://bitbucket.org",
			Type:           "bitbucket-cloud",
			TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "bitbucket", Key: "token"},
		}, {
			URL:            "https://bitbucket.example.com/scm",
			Type:           "bitbucket-server",
			TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "bitbucket-server", Key: "token"},
		}},
	}
	if diff := cmp.Diff(want, c.GitStatus); diff != "" {
		t.Errorf("GitStatus (-want +got):\n%s", diff)
	}
	// Nothing outside gitStatus moved.
	rest := c
	rest.GitStatus = Default().GitStatus
	if diff := cmp.Diff(Default(), rest, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("keys outside gitStatus differ from Default() (-want +got):\n%s", diff)
	}
}

// TestGitStatusRoundTrip writes a loaded configuration back as a file, keys
// spelled by the struct tags, and loads it again: every key survives, and the
// filled-in defaults load as themselves.
func TestGitStatusRoundTrip(t *testing.T) {
	first, err := Load(nil, writeConfig(t, gitStatusFile), nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var m map[string]any
	if err := mapstructure.Decode(first.GitStatus, &m); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(map[string]any{"gitStatus": m})
	if err != nil {
		t.Fatal(err)
	}
	second, err := Load(nil, writeConfig(t, string(out)), nil)
	if err != nil {
		t.Fatalf("Load of the written file: %v\n%s", err, out)
	}
	if diff := cmp.Diff(first.GitStatus, second.GitStatus); diff != "" {
		t.Errorf("after a round trip (-first +second):\n%s\nfile:\n%s", diff, out)
	}
	if len(second.GitStatus.Hosts) != 6 {
		t.Errorf("the written file holds %d hosts, want 6:\n%s", len(second.GitStatus.Hosts), out)
	}
}

// TestLoadGitStatusPrecedence: contextPrefix and targetURL have a flag and a
// variable, which win over the file as every other key's do.
func TestLoadGitStatusPrecedence(t *testing.T) {
	const file = "gitStatus:\n  contextPrefix: from-file\n  targetURL: https://file.example.com\n"
	tests := []struct {
		name              string
		env, flags        []string
		prefix, targetURL string
	}{
		{name: "file", prefix: "from-file", targetURL: "https://file.example.com"},
		{
			name:   "env over file",
			env:    []string{"CLAIMWARDEN_GITSTATUS_CONTEXTPREFIX=claimwarden/prod-eu", "CLAIMWARDEN_GITSTATUS_TARGETURL=https://env.example.com"},
			prefix: "claimwarden/prod-eu", targetURL: "https://env.example.com",
		},
		{
			name:   "flag over env",
			env:    []string{"CLAIMWARDEN_GITSTATUS_CONTEXTPREFIX=from-env", "CLAIMWARDEN_GITSTATUS_TARGETURL=https://env.example.com"},
			flags:  []string{"--git-status-context-prefix=from-flag"},
			prefix: "from-flag", targetURL: "https://env.example.com",
		},
		{
			name:   "flag empties the target URL",
			flags:  []string{"--git-status-target-url="},
			prefix: "from-file", targetURL: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(parsedFlags(t, tt.flags...), writeConfig(t, file), tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if c.GitStatus.ContextPrefix != tt.prefix || c.GitStatus.TargetURL != tt.targetURL {
				t.Errorf("contextPrefix, targetURL = %q, %q; want %q, %q", c.GitStatus.ContextPrefix, c.GitStatus.TargetURL, tt.prefix, tt.targetURL)
			}
		})
	}
}

func TestLoadRejectsGitStatus(t *testing.T) {
	const hostKeys = "url, type, tokenSecretRef.namespace, tokenSecretRef.name, tokenSecretRef.key, " +
		"githubApp.appID, githubApp.installationID, githubApp.privateKeySecretRef.namespace, githubApp.privateKeySecretRef.name, githubApp.privateKeySecretRef.key"
	tests := []struct {
		name string
		file string
		env  []string
		want string // the whole error text after the file name
	}{{
		name: "unknown key inside a host",
		file: "gitStatus:\n  hosts:\n  - url: https://github.com\n    type: github\n    token: s3cret\n    tokenSecretRef: {name: gh}\n",
		want: `unknown key "gitStatus.hosts[0].token" (known keys of a host: ` + hostKeys + `)`,
	}, {
		name: "unknown keys in nested references of several hosts",
		file: "gitStatus:\n  hosts:\n" +
			"  - url: https://github.com\n    type: github\n    tokenSecretRef: {name: gh, secretKey: pat}\n" +
			"  - url: https://ghe.example.com\n    type: github\n    githubApp:\n      appID: 1\n      installationID: 2\n      privateKeySecretRef: {name: app, namepsace: git}\n",
		want: `unknown keys "gitStatus.hosts[0].tokenSecretRef.secretkey", "gitStatus.hosts[1].githubApp.privateKeySecretRef.namepsace" (known keys of a host: ` + hostKeys + `)`,
	}, {
		name: "unknown keys inside a bundle and a host: one line each",
		file: "policies:\n  bundles:\n  - name: org\n    url: https://x/org\n    tokn: x\n" +
			"gitStatus:\n  hosts:\n  - url: https://github.com\n    type: github\n    tokenSecretRef: {name: gh}\n    app: {}\n",
		want: `unknown key "policies.bundles[0].tokn" (known keys of a bundle: name, url, pollMin, pollMax, tokenFile, caCertFile, publicKeyFile, keyID, algorithm, scope, sizeLimitBytes, totalSizeLimitBytes, downloadTimeout, trigger)` + "\n" +
			`unknown key "gitStatus.hosts[0].app" (known keys of a host: ` + hostKeys + `)`,
	}, {
		name: "unknown gitStatus key",
		file: "gitStatus:\n  context: claimwarden\n",
		want: `unknown key "gitstatus.context" (known keys: kubeconfig, ...`,
	}, {
		name: "hosts written as a map",
		file: "gitStatus:\n  hosts:\n    url: https://github.com\n",
		want: `unknown key "gitstatus.hosts.url" (known keys: ...`,
	}, {
		name: "app ID that is not a number",
		file: "gitStatus:\n  hosts:\n  - url: https://github.com\n    type: github\n    githubApp: {appID: my-app, installationID: 2, privateKeySecretRef: {name: app}}\n",
		want: `gitStatus.hosts[0].githubApp.appID: "my-app" is not a valid int64`,
	}, {
		name: "hosts in the environment",
		env:  []string{"CLAIMWARDEN_GITSTATUS_HOSTS=https://github.com"},
		want: "environment variable CLAIMWARDEN_GITSTATUS_HOSTS: gitStatus.hosts can be set in the configuration file only",
	}, {
		name: "invalid prefix in the environment",
		env:  []string{"CLAIMWARDEN_GITSTATUS_CONTEXTPREFIX=claimwarden/"},
		want: `gitStatus.contextPrefix: "claimwarden/" starts or ends with "/": contexts are <prefix>/<namespace>/<statefulset>`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeConfig(t, tt.file)
			}
			_, err := Load(parsedFlags(t), path, tt.env)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			got := strings.TrimPrefix(err.Error(), "config file "+path+": ")
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(got, prefix) {
					t.Errorf("error = %q, want it to start with %q", got, prefix)
				}
			} else if got != tt.want {
				t.Errorf("error = %q\nwant    %q", got, tt.want)
			}
		})
	}
}

func TestValidateGitStatus(t *testing.T) {
	ref := func(name string) *SecretKeyRef { return &SecretKeyRef{Namespace: "ops", Name: name, Key: "token"} }
	app := func() *GitHubApp {
		return &GitHubApp{AppID: 1, InstallationID: 2, PrivateKeySecretRef: SecretKeyRef{Namespace: "ops", Name: "app", Key: "privateKey"}}
	}
	// host sets c's only host: a valid one changed by change.
	host := func(change func(*GitHost)) func(*GitStatus) {
		return func(g *GitStatus) {
			h := GitHost{URL: "https://github.com", Type: "github", TokenSecretRef: ref("gh")}
			change(&h)
			g.Hosts = []GitHost{h}
		}
	}
	tests := []struct {
		name   string
		change func(*GitStatus)
		want   string // the whole error text, or its start when it ends with "..."
	}{
		{"empty context prefix", func(g *GitStatus) { g.ContextPrefix = "" },
			`gitStatus.contextPrefix: "" is empty: every status context starts with it`},
		{"context prefix starting with a slash", func(g *GitStatus) { g.ContextPrefix = "/claimwarden" },
			`gitStatus.contextPrefix: "/claimwarden" starts or ends with "/": contexts are <prefix>/<namespace>/<statefulset>`},
		{"target URL not http", func(g *GitStatus) { g.TargetURL = "rollouts.example.com" },
			`gitStatus.targetURL: "rollouts.example.com" is not an http or https URL`},
		{"target URL with a password, redacted", func(g *GitStatus) { g.TargetURL = "https://admin:hunter2@rollouts.example.com/x" },
			`gitStatus.targetURL: "https://xxxxx@rollouts.example.com/x" holds a user name or password, which every status would publish`},
		{"flux events address not http", func(g *GitStatus) { g.FluxEventsAddr = "notification-controller:9090" },
			`gitStatus.fluxEventsAddr: "notification-controller:9090" is not an http or https URL`},

		{"host URL missing", host(func(h *GitHost) { h.URL = "" }),
			`gitStatus.hosts[0].url: "" is not an http or https URL`},
		{"host URL scheme", host(func(h *GitHost) { h.URL = "ssh://git@github.com" }),
			`gitStatus.hosts[0].url: "ssh://xxxxx@github.com" is not an http or https URL`},
		{"host URL without scheme", host(func(h *GitHost) { h.URL = "github.com" }),
			`gitStatus.hosts[0].url: "github.com" is not an http or https URL`},
		{"host URL with a token, redacted", host(func(h *GitHost) { h.URL = "https://oauth2:glpat-s3cret@gitlab.example.com" }),
			`gitStatus.hosts[0].url: "https://xxxxx@gitlab.example.com" holds a user name or password: reference a Secret in tokenSecretRef instead`},
		{"unparsable host URL with a token, redacted", host(func(h *GitHost) { h.URL = "https://oauth2:glpat-s3cret@gitlab.example.com:port" }),
			`gitStatus.hosts[0].url: "https://xxxxx@gitlab.example.com:port" is not a URL: invalid port ":port" after host`},
		{"host URLs not unique", func(g *GitStatus) {
			g.Hosts = []GitHost{
				{URL: "https://github.com", Type: "github", TokenSecretRef: ref("a")},
				{URL: "https://gitlab.com", Type: "gitlab", TokenSecretRef: ref("b")},
				{URL: "https://GitHub.com:443/", Type: "github", TokenSecretRef: ref("c")},
			}
		}, `gitStatus.hosts[2].url: "https://GitHub.com:443/" names the same host (github.com) as gitStatus.hosts[0]`},
		{"same host name, other port", func(g *GitStatus) {
			g.Hosts = []GitHost{
				{URL: "https://git.example.com", Type: "gitea", TokenSecretRef: ref("a")},
				{URL: "https://git.example.com:8443", Type: "gitlab", TokenSecretRef: ref("b")},
				{URL: "https://git.example.com:8443/gitlab", Type: "gitlab", TokenSecretRef: ref("c")},
			}
		}, `gitStatus.hosts[2].url: "https://git.example.com:8443/gitlab" names the same host (git.example.com:8443) as gitStatus.hosts[1]`},
		{"type missing", host(func(h *GitHost) { h.Type = "" }),
			`gitStatus.hosts[0].type: "" is not one of github, gitlab, gitea, bitbucket-cloud, bitbucket-server`},
		{"type is case-sensitive", host(func(h *GitHost) { h.Type = "GitHub" }),
			`gitStatus.hosts[0].type: "GitHub" is not one of ...`},
		{"neither token nor app", host(func(h *GitHost) { h.TokenSecretRef = nil }),
			`gitStatus.hosts[0]: "https://github.com" has neither tokenSecretRef nor githubApp: set one of them`},
		{"both token and app", host(func(h *GitHost) { h.GitHubApp = app() }),
			`gitStatus.hosts[0]: "https://github.com" has both tokenSecretRef and githubApp: set one of them`},
		{"app on another type", host(func(h *GitHost) { h.Type, h.TokenSecretRef, h.GitHubApp = "gitea", nil, app() }),
			`gitStatus.hosts[0].type: "gitea" has a githubApp, which only type github takes`},
		{"app without IDs", host(func(h *GitHost) {
			h.TokenSecretRef, h.GitHubApp = nil, app()
			h.GitHubApp.AppID, h.GitHubApp.InstallationID = 0, -2
		}), "gitStatus.hosts[0].githubApp.appID: \"0\" is not a GitHub App ID (a positive number)\n" +
			"gitStatus.hosts[0].githubApp.installationID: \"-2\" is not an installation ID (a positive number)"},
		{"app private key without a Secret name", host(func(h *GitHost) {
			h.TokenSecretRef, h.GitHubApp = nil, app()
			h.GitHubApp.PrivateKeySecretRef.Name = ""
		}), `gitStatus.hosts[0].githubApp.privateKeySecretRef.name: "" is not a Secret name: ...`},
		{"token Secret without a name", host(func(h *GitHost) { h.TokenSecretRef.Name = "" }),
			`gitStatus.hosts[0].tokenSecretRef.name: "" is not a Secret name: ...`},
		{"token Secret name not DNS", host(func(h *GitHost) { h.TokenSecretRef.Name = "GitHub_Token" }),
			`gitStatus.hosts[0].tokenSecretRef.name: "GitHub_Token" is not a Secret name: a lowercase RFC 1123 subdomain must consist of ...`},
		{"token Secret namespace not DNS", host(func(h *GitHost) { h.TokenSecretRef.Namespace = "git.ops" }),
			`gitStatus.hosts[0].tokenSecretRef.namespace: "git.ops" is not a namespace name: ...`},
		{"token Secret key", host(func(h *GitHost) { h.TokenSecretRef.Key = "api/token" }),
			`gitStatus.hosts[0].tokenSecretRef.key: "api/token" is not a Secret key: ...`},
		{"token Secret key empty", host(func(h *GitHost) { h.TokenSecretRef.Key = "" }),
			`gitStatus.hosts[0].tokenSecretRef.key: "" is not a Secret key: ...`},
		{"second host named by its index", func(g *GitStatus) {
			g.Hosts = []GitHost{
				{URL: "https://github.com", Type: "github", TokenSecretRef: ref("a")},
				{URL: "https://gitlab.com", Type: "gitlab", TokenSecretRef: ref("B")},
			}
		}, `gitStatus.hosts[1].tokenSecretRef.name: "B" is not a Secret name: ...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.change(&c.GitStatus)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate succeeded, want an error")
			}
			if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error = %q, want it to start with %q", err, prefix)
				}
			} else if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
			for _, secret := range []string{"hunter2", "glpat-s3cret"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals the password %q", err, secret)
				}
			}
		})
	}
}

func TestValidateAcceptsGitStatus(t *testing.T) {
	c := Default()
	c.GitStatus = GitStatus{
		ContextPrefix: "claimwarden/prod-eu",
		TargetURL:     "http://rollouts.example.com:8080/dash?cluster=prod-eu",
		Hosts: []GitHost{
			{URL: "https://github.com/", Type: "github", TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "gh", Key: "token"}},
			{URL: "https://ghe.example.com", Type: "github", GitHubApp: &GitHubApp{AppID: 1, InstallationID: 2, PrivateKeySecretRef: SecretKeyRef{Namespace: "git", Name: "app.key", Key: "private_key.pem"}}},
			// The same host name on another port is another host.
			{URL: "https://ghe.example.com:8443", Type: "gitea", TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "gitea", Key: "token"}},
			{URL: "http://[fd00::1]:3000", Type: "gitea", TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "gitea6", Key: "token"}},
			{URL: "https://bitbucket.example.com/scm", Type: "bitbucket-server", TokenSecretRef: &SecretKeyRef{Namespace: "ops", Name: "bb", Key: "token"}},
		},
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
}

// TestShippedGitStatusExample uncomments the hosts example of the shipped
// config.yaml and loads it, so that the documentation stays valid.
func TestShippedGitStatusExample(t *testing.T) {
	b, err := os.ReadFile("manager/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n  hosts: []\n")
	if !ok {
		t.Fatal("manager/config.yaml has no `  hosts: []` line")
	}
	example := "gitStatus:\n  hosts:\n"
	for line := range strings.Lines(after) {
		rest, ok := strings.CutPrefix(line, "  # ")
		if !ok {
			break
		}
		if strings.HasPrefix(strings.TrimSpace(rest), "#") {
			continue // a continued comment
		}
		example += "  " + rest
	}
	inPod(t, "ops")
	c, err := Load(nil, writeConfig(t, example), nil)
	if err != nil {
		t.Fatalf("Load of the example:\n%s\n%v", example, err)
	}
	if n := len(c.GitStatus.Hosts); n != 3 {
		t.Fatalf("the example has %d hosts, want 3:\n%s", n, example)
	}
	if app := c.GitStatus.Hosts[1].GitHubApp; app == nil || app.PrivateKeySecretRef.Namespace != "ops" {
		t.Errorf("second example host: githubApp = %+v, want one whose Secret is in the Pod's namespace", app)
	}
}

// TestLoadWorkloadAnnotations: the allow-list is read from the file only,
// off by default, and unknown keys inside a rule are refused.
func TestLoadWorkloadAnnotations(t *testing.T) {
	if got := Default().GitStatus.WorkloadAnnotations; len(got) != 0 {
		t.Errorf("default allow-list = %v, want none", got)
	}
	c, err := Load(nil, writeConfig(t, "gitStatus:\n  workloadAnnotations:\n"+
		"  - namespace: team-a\n    repositoryPrefixes: [https://github.com/team-a, git@github.com:shared/charts]\n"+
		"  - namespace: '*'\n    repositoryPrefixes: [https://git.example.com/platform/]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []WorkloadAnnotationRule{
		{Namespace: "team-a", RepositoryPrefixes: []string{"https://github.com/team-a", "git@github.com:shared/charts"}},
		{Namespace: "*", RepositoryPrefixes: []string{"https://git.example.com/platform/"}},
	}
	if diff := cmp.Diff(want, c.GitStatus.WorkloadAnnotations); diff != "" {
		t.Errorf("workloadAnnotations (-want +got):\n%s", diff)
	}

	path := writeConfig(t, "gitStatus:\n  workloadAnnotations:\n  - namespace: team-a\n    prefixes: [https://github.com/team-a]\n")
	_, err = Load(nil, path, nil)
	if want := `unknown key "gitStatus.workloadAnnotations[0].prefixes" (known keys of a workloadAnnotations rule: namespace, repositoryPrefixes)`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Load with a misspelt key = %v, want %q", err, want)
	}
	_, err = Load(nil, "", []string{"CLAIMWARDEN_GITSTATUS_WORKLOADANNOTATIONS=team-a"})
	if err == nil || !strings.Contains(err.Error(), "gitStatus.workloadAnnotations can be set in the configuration file only") {
		t.Errorf("Load with the allow-list in the environment = %v", err)
	}
}

func TestValidateWorkloadAnnotations(t *testing.T) {
	for _, tt := range []struct {
		name string
		rule WorkloadAnnotationRule
		want string // "" for valid
	}{
		{"https prefix", WorkloadAnnotationRule{"team-a", []string{"https://github.com/team-a"}}, ""},
		{"scp-like and ssh prefixes, every namespace", WorkloadAnnotationRule{"*", []string{"git@github.com:org", "ssh://git@git.example.com:2222/org"}}, ""},
		{"whole host", WorkloadAnnotationRule{"team-a", []string{"https://git.example.com"}}, ""},
		{"bad namespace", WorkloadAnnotationRule{"Team_A", []string{"https://github.com/team-a"}}, `gitStatus.workloadAnnotations[0].namespace: "Team_A" is neither "*" nor a namespace name`},
		{"no prefix", WorkloadAnnotationRule{Namespace: "team-a"}, `gitStatus.workloadAnnotations[0].repositoryPrefixes: "" is empty`},
		{"unparseable, redacted", WorkloadAnnotationRule{"team-a", []string{"https://tok?en@github.com/team-a"}}, `gitStatus.workloadAnnotations[0].repositoryPrefixes[0]: "https://xxxxx@github.com/team-a" is not a valid URL`},
		{"git scheme", WorkloadAnnotationRule{"team-a", []string{"git://github.com/team-a"}}, `repositoryPrefixes[0]: "git://github.com/team-a" has scheme "git"`},
		{"not a URL", WorkloadAnnotationRule{"team-a", []string{"github.com/team-a"}}, `repositoryPrefixes[0]: "github.com/team-a" is neither a URL`},
		{"empty prefix", WorkloadAnnotationRule{"team-a", []string{""}}, `repositoryPrefixes[0]: "" is empty`},
	} {
		c := Default()
		c.GitStatus.WorkloadAnnotations = []WorkloadAnnotationRule{tt.rule}
		err := c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate() = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}
