package manifests

import (
	"strings"
	"testing"
)

// A quantity of an absurd exponent costs minutes to parse or compare
// ("1E-99999999": 43 s to parse; "1E99999999": 38 s to compare with 8Ei):
// it is refused from its text, wherever a StatefulSet holds a quantity.
func TestStatefulSetsRefuseAbsurdExponents(t *testing.T) {
	// Quoted: YAML reads an unquoted 1e-99999999 as the float 0.
	container := strings.Replace(sts("web", "1Gi", ""), "  volumeClaimTemplates:", `  template:
    spec:
      containers:
      - name: db
        image: db
        resources:
          limits:
            cpu: "1e-99999999"
  volumeClaimTemplates:`, 1)
	cases := []struct{ name, in, want string }{
		{"huge template size", sts("web", "1E99999999", ""), `StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1E99999999": the exponent 99999999 is beyond ±1000`},
		{"tiny template size", sts("web", `"1E-99999999"`, ""), `StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1E-99999999": the exponent -99999999 is beyond ±1000`},
		{"exponent beyond int64", sts("web", "1e99999999999999999999", ""), `StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1e99999999999999999999": the exponent 99999999999999999999 is beyond ±1000`},
		{"container limit", container, `StatefulSet default/web (a.yaml:14): spec.template.spec.containers[0].resources.limits.cpu: "1e-99999999": the exponent -99999999 is beyond ±1000`},
		{"too long", sts("web", strings.Repeat("1", 1025), ""), `StatefulSet default/web (a.yaml:13): spec.volumeClaimTemplates[0].spec.resources.requests.storage: is 1025 characters long, more than any quantity (1024)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := StatefulSets(decodeT(t, "a.yaml", c.in))
			if err == nil || err.Error() != c.want {
				t.Errorf("StatefulSets = %d objects, error:\n%v\nwant:\n%s", len(got), err, c.want)
			}
		})
	}
	// Ordinary exponents still read as quantities.
	if got, _, err := StatefulSets(decodeT(t, "a.yaml", sts("web", "1e9", ""))); err != nil || len(got) != 1 {
		t.Errorf("1e9: %d objects, %v; want the StatefulSet", len(got), err)
	}
}
