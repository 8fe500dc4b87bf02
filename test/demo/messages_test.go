package main

import "testing"

// The messages the demo quotes are shortened for reading; what matters in
// them must survive.
func TestMessageShortening(t *testing.T) {
	sha := "b2bd49341c0ffee0123456789abcdef012345678"
	for _, tc := range []struct{ name, in, want string }{
		{
			name: "Flux's apply failure keeps the resource and why",
			in:   `StatefulSet/demo/db dry-run failed (Invalid): StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{core.PersistentVolumeClaim{TypeMeta:v1.TypeMeta{Kind:"", APIVersion:""}}}: field is immutable`,
			want: `StatefulSet/demo/db dry-run failed (Invalid): StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [...]: field is immutable`,
		},
		{
			name: "Argo CD's failed sync keeps the resource and why",
			in:   `one or more objects failed to apply, reason: error when patching "/dev/shm/3589546656": StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [{"name":"data","Spec":{"Resources":{"Requests":{"storage":"8Gi"}}}}]: field is immutable`,
			want: `one or more objects failed to apply, reason: error when patching "/dev/shm/3589546656": StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [...]: field is immutable`,
		},
		{
			name: "Argo CD's retried sync keeps when it retries",
			in:   `one or more objects failed to apply, reason: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [{"name":"data"}]: field is immutable. Retrying attempt #1 at 2026-11-30T09:07:20Z.`,
			want: `one or more objects failed to apply, reason: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [...]: field is immutable. Retrying attempt #1 at 2026-11-30T09:07:20Z.`,
		},
		{
			name: "helm-controller's failed upgrade keeps the release, chart and why",
			in:   `Helm upgrade failed for release demo/demo-db with chart db@0.2.0+db7292d2b116: server-side apply failed for object demo/db apps/v1, Kind=StatefulSet: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{core.PersistentVolumeClaim{}}: field is immutable`,
			want: `Helm upgrade failed for release demo/demo-db with chart db@0.2.0+db7292d2b116: server-side apply failed for object demo/db apps/v1, Kind=StatefulSet: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: [...]: field is immutable`,
		},
		{
			name: "an API server cause",
			in:   `Invalid value: []core.PersistentVolumeClaim{}: field is immutable`,
			want: `Invalid value: [...]: field is immutable`,
		},
		{
			name: "without a value nothing changes",
			in:   "3/3 claims compatible",
			want: "3/3 claims compatible",
		},
	} {
		if got := elideValue(tc.in); got != tc.want {
			t.Errorf("%s: elideValue\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
	if got, want := shortSHAs("Applied revision: main@sha1:"+sha), "Applied revision: main@sha1:b2bd4934"; got != want {
		t.Errorf("shortSHAs = %q, want %q", got, want)
	}
	if got := shortSHAs("uid 9fe93ba5-b7f0-4716-b7f0-a4fc05e41c86"); got != "uid 9fe93ba5-b7f0-4716-b7f0-a4fc05e41c86" {
		t.Errorf("shortSHAs changed a UID: %q", got)
	}
}
