package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckQuotaFromBaseManifests: ResourceQuotas in the base are the
// namespace's for quota-fits; a quota without status.used (as written in
// Git) has its use counted from the base's claims, one with it keeps it.
func TestCheckQuotaFromBaseManifests(t *testing.T) {
	for _, tc := range []struct{ name, quota, want string }{
		{"counted", "", "ResourceQuota storage has 40Gi used of 44Gi: 66Gi over"},
		{"as exported", "status:\n  used:\n    requests.storage: 42Gi\n", "ResourceQuota storage has 42Gi used of 44Gi: 68Gi over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			for _, f := range []string{"big.yaml", "small.yaml", "storageclass.yaml"} {
				b, err := os.ReadFile(filepath.Join("testdata/check/grow/base", f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(base, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			quota := "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: storage\n  namespace: shop\nspec:\n  hard:\n    requests.storage: 44Gi\n    cpu: \"4\"\n" + tc.quota
			if err := os.WriteFile(filepath.Join(base, "quota.yaml"), []byte(quota), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out := runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--base", base)
			// Its two claims are decided together (5Gi each, 10Gi in all),
			// and with big's 60Gi, merged with it in the same namespace.
			want := "quota-fits: claim data-small-0 (StatefulSet shop/small): 10Gi → 15Gi with the other claims of the proposal (2 in all) needs 10Gi more requests.storage besides 60Gi more for other proposals in flight, and " + tc.want
			if code != exitDenied || !strings.Contains(out, want) {
				t.Errorf("exit code %d, want %d and %q:\n%s", code, exitDenied, want, out)
			}
		})
	}

	// Without the quota, small's +50% passes: the denial above is quota-fits'.
	code, out := runCheckCLI(t, nil, "-f", "testdata/check/grow/pr", "--base", "testdata/check/grow/base")
	if strings.Contains(out, "quota-fits") || code != exitDenied {
		t.Errorf("exit code %d, want %d (max-step on big) and no quota-fits:\n%s", code, exitDenied, out)
	}
}
