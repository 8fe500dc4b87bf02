package converge

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

var sealKey = []byte(strings.Repeat("k", MinKeyLength))

// A sealed record opens after the API server re-encoded it (sorted keys);
// a record changed in any part the MAC covers, sealed with another key,
// unsealed or of another version does not.
func TestSealOpen(t *testing.T) {
	web := types.NamespacedName{Namespace: "shop", Name: "web"}
	rec, err := Record(sealKey, "uid-1", Prepare(liveLike()))
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(rec.Object.Raw, &generic); err != nil {
		t.Fatal(err)
	}
	reencoded := rec
	if reencoded.Object.Raw, err = json.Marshal(generic); err != nil {
		t.Fatal(err)
	}
	if string(reencoded.Object.Raw) == string(rec.Object.Raw) {
		t.Fatal("re-encoding changed nothing: the test proves nothing")
	}
	if _, err := open(sealKey, web, &reencoded); err != nil {
		t.Fatalf("a genuine record, re-encoded: %v", err)
	}

	withObject := func(edit func(map[string]any)) func(*v1alpha1.PendingRecreate) {
		return func(r *v1alpha1.PendingRecreate) {
			var m map[string]any
			if err := json.Unmarshal(r.Object.Raw, &m); err != nil {
				t.Fatal(err)
			}
			edit(m)
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			r.Object = runtime.RawExtension{Raw: raw}
		}
	}
	podSpec := func(m map[string]any) map[string]any {
		return m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.PendingRecreate)
		key  []byte
		at   types.NamespacedName
		want string
	}{
		{name: "another Pod template", edit: withObject(func(m map[string]any) {
			podSpec(m)["containers"] = []any{map[string]any{"name": "c", "image": "evil:1", "securityContext": map[string]any{"privileged": true}}}
		}), want: "MAC does not verify"},
		{name: "a service account", edit: withObject(func(m map[string]any) { podSpec(m)["serviceAccountName"] = "admin" }), want: "MAC does not verify"},
		{name: "another name in the object", edit: withObject(func(m map[string]any) {
			m["metadata"].(map[string]any)["name"] = "other"
		}), want: "names statefulset shop/other"},
		{name: "a Deployment", edit: withObject(func(m map[string]any) { m["kind"] = "Deployment" }), want: "not an apps/v1 StatefulSet"},
		{name: "another old UID", edit: func(r *v1alpha1.PendingRecreate) { r.UID = "uid-2" }, want: "MAC does not verify"},
		{name: "the record of another StatefulSet", at: types.NamespacedName{Namespace: "shop", Name: "other"}, want: "names statefulset shop/web"},
		{name: "no MAC", edit: func(r *v1alpha1.PendingRecreate) { r.MAC, r.Version = "", 0 }, want: "carries no MAC"},
		{name: "MAC of another key", key: []byte(strings.Repeat("x", MinKeyLength)), want: "MAC does not verify"},
		{name: "MAC not base64", edit: func(r *v1alpha1.PendingRecreate) { r.MAC = "!!" }, want: "not base64"},
		{name: "another version", edit: func(r *v1alpha1.PendingRecreate) { r.Version = RecordVersion + 1 }, want: "record version"},
	} {
		r := reencoded
		if tc.edit != nil {
			tc.edit(&r)
		}
		key, at := sealKey, web
		if tc.key != nil {
			key = tc.key
		}
		if tc.at.Name != "" {
			at = tc.at
		}
		_, err := open(key, at, &r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: open = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestRecordNeedsAKey(t *testing.T) {
	if _, err := Record(sealKey[:MinKeyLength-1], "uid-1", Prepare(liveLike())); err == nil || !strings.Contains(err.Error(), "journal key") {
		t.Errorf("Record with a short key = %v, want an error about the key", err)
	}
}
