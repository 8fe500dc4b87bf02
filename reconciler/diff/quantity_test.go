package diff

import (
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// overInt64 is 2^64 + 15Gi: the API server accepts it, and Quantity.Value
// wraps it around to 15Gi.
const overInt64 = "18446744089815678976"

func TestComputeRejectsSizesBeyondInt64(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want []string
	}{{
		name: "template beyond int64",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", overInt64)}), PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi")}},
		want: []string{"db/web", "spec.volumeClaimTemplates[0] (data)", "spec.resources.requests.storage", overInt64, "8Ei"},
	}, {
		name: "template of a huge exponent",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1E99999999")}), PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "10Gi")}},
		want: []string{"db/web", "spec.volumeClaimTemplates[0] (data)", "spec.resources.requests.storage", "8Ei"},
	}, {
		name: "template of zero",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "0")})},
		want: []string{"db/web", "spec.volumeClaimTemplates[0] (data)", "spec.resources.requests.storage", "greater than zero"},
	}, {
		name: "claim request beyond int64",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}), PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", overInt64, "10Gi")}},
		want: []string{"db/web", "PersistentVolumeClaim db/data-web-0", "spec.resources.requests.storage", "8Ei"},
	}, {
		name: "claim capacity beyond int64",
		in:   Input{Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}), PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "10Gi", "1E99999999")}},
		want: []string{"db/web", "PersistentVolumeClaim db/data-web-0", "status.capacity.storage", "8Ei"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(tc.in)
			if err == nil {
				for _, c := range res.Claims {
					t.Errorf("claim %s: the policies would see %d → %d bytes, the patch would ask for %s", c.Name, c.RequestFrom.Value(), c.TemplateRequest.Value(), c.RequestTo.String())
				}
				t.Fatal("Compute succeeded, want an error naming the field")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// The diff and the policies count whole bytes, rounded up: half a byte
// either way is no change, and a claim is over-sized or needs a patch
// exactly when the policies see a decrease or an increase.
func TestComputeComparesWholeBytes(t *testing.T) {
	cases := []struct {
		name                                string
		template, request                   string
		overSized, needsPatch, isCompatible bool
		fromBytes, toBytes                  int64
	}{
		{name: "template half a byte below", template: "10737418239.5", request: "10Gi", isCompatible: true, fromBytes: 10 << 30, toBytes: 10 << 30},
		{name: "request half a byte below", template: "10Gi", request: "10737418239.5", isCompatible: true, fromBytes: 10 << 30, toBytes: 10 << 30},
		{name: "template half a byte above", template: "10737418240.5", request: "10Gi", needsPatch: true, fromBytes: 10 << 30, toBytes: 10<<30 + 1},
		{name: "template a byte below", template: "10737418239", request: "10Gi", overSized: true, isCompatible: true, fromBytes: 10 << 30, toBytes: 10<<30 - 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(Input{
				Desired: statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", tc.template)}),
				PVCs:    []corev1.PersistentVolumeClaim{pvc("data-web-0", tc.request, "10Gi")},
			})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Claims[0]
			if c.OverSized != tc.overSized || c.NeedsPatch() != tc.needsPatch || c.Compatible != tc.isCompatible {
				t.Errorf("over-sized %v, needs patch %v, compatible %v (reasons %q); want %v, %v, %v",
					c.OverSized, c.NeedsPatch(), c.Compatible, c.Reasons, tc.overSized, tc.needsPatch, tc.isCompatible)
			}
			if c.FromBytes != tc.fromBytes || c.TemplateBytes != tc.toBytes {
				t.Errorf("bytes %d → %d, want %d → %d", c.FromBytes, c.TemplateBytes, tc.fromBytes, tc.toBytes)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for text, want := range map[string]int64{
		"10Gi":                10 << 30,
		"10737418239.5":       10 << 30,
		"1n":                  1,
		"1":                   1,
		"1E18":                1e18,
		"9223372036854775806": 9223372036854775806,
		"7Ei":                 7 << 60,
	} {
		if got, err := Bytes(resource.MustParse(text)); err != nil || got != want {
			t.Errorf("Bytes(%s) = %d, %v; want %d", text, got, err, want)
		}
	}
	for text, want := range map[string]string{
		"0":                   "greater than zero",
		"-1Gi":                "greater than zero",
		"-1E99999999":         "greater than zero",
		overInt64:             "8Ei",
		"9223372036854775807": "8Ei", // 9Ei parses as this: it cannot be told from more
		"9Ei":                 "8Ei",
		"8Ei":                 "8Ei",
		"1E19":                "8Ei",
		"1E99999999":          "8Ei",
	} {
		if got, err := Bytes(resource.MustParse(text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Bytes(%s) = %d, %v; want an error containing %q", text, got, err, want)
		}
	}
}

func TestComputeBoundsClaims(t *testing.T) {
	huge := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "1Gi")}, replicas(2147483647))
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Compute(Input{Desired: huge, PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-0", "1Gi", "1Gi")}})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("Compute of 2147483647 replicas succeeded, want an error")
	}
	for _, w := range []string{"db/web", "spec.replicas", "2147483647", "1000"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing 2147483647 replicas allocated %d bytes, want under 1 MiB", n)
	}

	two := []corev1.PersistentVolumeClaim{tmpl("data", "1Gi"), tmpl("logs", "1Gi")}
	if _, err := Compute(Input{Desired: statefulSet(two, replicas(2)), MaxClaims: 4}); err != nil {
		t.Errorf("4 claims with a limit of 4: %v", err)
	}
	_, err = Compute(Input{Desired: statefulSet(two, replicas(3)), MaxClaims: 4})
	if err == nil || !strings.Contains(err.Error(), "6 claims") || !strings.Contains(err.Error(), "limit of 4") {
		t.Errorf("6 claims with a limit of 4: error %v, want one naming 6 claims and the limit of 4", err)
	}
}

func TestComputeOrdinalsAtTheEndOfInt32(t *testing.T) {
	last := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "2Gi")}, start(2147483647), replicas(1))
	res, err := Compute(Input{Desired: last, PVCs: []corev1.PersistentVolumeClaim{pvc("data-web-2147483647", "1Gi", "1Gi")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Claims) != 1 || res.Claims[0].Name != "data-web-2147483647" || res.Claims[0].Missing || !res.Claims[0].NeedsPatch() {
		t.Fatalf("claims %+v, want data-web-2147483647 compared and needing a patch", res.Claims)
	}

	beyond := statefulSet([]corev1.PersistentVolumeClaim{tmpl("data", "2Gi")}, start(2147483647), replicas(2))
	_, err = Compute(Input{Desired: beyond})
	if err == nil {
		t.Fatal("ordinals beyond 2147483647: Compute succeeded, want an error")
	}
	for _, w := range []string{"db/web", "spec.ordinals.start", "spec.replicas", "2147483647"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestTemplatesEqualOfAHugeExponentIsBounded(t *testing.T) {
	huge := []corev1.PersistentVolumeClaim{tmpl("data", "1E99999999")}
	if TemplatesEqual(huge, []corev1.PersistentVolumeClaim{tmpl("data", "1E99999999")}) {
		t.Error("templates of 1E99999999 compare equal, want unequal (the diff refuses them)")
	}
	if !TemplatesEqual([]corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}, []corev1.PersistentVolumeClaim{tmpl("data", "10Gi")}) {
		t.Error("equal templates of 10Gi compare unequal")
	}
}
