package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckProposedClusterObjectsOnlyAddDenials (issue 28): the
// StorageClasses and ResourceQuotas of a pull request are applied with it,
// but they never lift a denial the base gives; they can add one.
func TestCheckProposedClusterObjectsOnlyAddDenials(t *testing.T) {
	const (
		fixedClass = "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: fast\nprovisioner: csi.example.com\nallowVolumeExpansion: false\n"
		quota      = "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: storage\n  namespace: shop\nspec:\n  hard:\n    requests.storage: %s\n"
	)
	for _, tc := range []struct {
		name, file, base, pr string
		want                 string // a denial the check must report
	}{
		// The base's class does not expand; the PR's does: still denied.
		{"class lifted", "storageclass.yaml", fixedClass, strings.Replace(fixedClass, "false", "true", 1), "expansion-allowed: claim data-small-0"},
		// The PR's class does not expand: denied.
		{"class fixed", "storageclass.yaml", "", fixedClass, "expansion-allowed: claim data-small-0"},
		// The base's quota has no room; the PR raises it: still denied.
		{"quota raised", "quota.yaml", strings.Replace(quota, "%s", "44Gi", 1), strings.Replace(quota, "%s", "1000Gi", 1), "quota-fits: claim data-small-0"},
		// The PR brings a quota with no room: denied.
		{"quota added", "quota.yaml", "", strings.Replace(quota, "%s", "44Gi", 1), "quota-fits: claim data-small-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, pr := copyDir(t, "testdata/check/grow/base"), copyDir(t, "testdata/check/grow/pr")
			if tc.base != "" {
				writeIn(t, base, tc.file, tc.base)
			}
			writeIn(t, pr, tc.file, tc.pr)
			code, out := runCheckCLI(t, nil, "-f", pr, "--base", base)
			if code != exitDenied || !strings.Contains(out, tc.want) {
				t.Errorf("exit code %d, want %d and %q:\n%s", code, exitDenied, tc.want, out)
			}
		})
	}
}

// copyDir copies the files of dir into a new temporary directory.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeIn(t, out, e.Name(), string(b))
	}
	return out
}

func writeIn(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
