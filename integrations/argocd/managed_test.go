package argocd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// managedAnswer is shaped as argocd-server v3.6.1 answers
// managed-resources?group=apps&kind=StatefulSet: states are JSON documents
// inside JSON strings; a StatefulSet Git no longer holds has none.
const managedAnswer = `{"items":[
 {"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web",
  "targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"annotations\":{\"argocd.argoproj.io/tracking-id\":\"shop:apps/StatefulSet:shop/web\"}},\"spec\":{\"serviceName\":\"web\",\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"2Gi\"}}}}]}}",
  "liveState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\"}","modified":true},
 {"group":"apps","kind":"StatefulSet","namespace":"shop","name":"old","liveState":"{}","targetState":"null"},
 {"group":"apps","kind":"StatefulSet","namespace":"","name":"nsless",
  "targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"nsless\"}}"},
 {"group":"","kind":"Service","namespace":"shop","name":"web","targetState":"{\"kind\":\"Service\"}"}
]}`

func TestDecodeManagedStatefulSets(t *testing.T) {
	got, err := decodeManagedStatefulSets([]byte(managedAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("decoded %d StatefulSets, want 3 (the Service skipped): %+v", len(got), got)
	}
	web := got[0]
	if web.Key != (types.NamespacedName{Namespace: "shop", Name: "web"}) || web.Target == nil {
		t.Fatalf("first = %+v", web)
	}
	size := web.Target.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"]
	if size.Cmp(resource.MustParse("2Gi")) != 0 || web.Target.Namespace != "shop" {
		t.Errorf("web: template size %s namespace %q, want 2Gi in shop", size.String(), web.Target.Namespace)
	}
	if got[1].Target != nil {
		t.Errorf("old: targetState null decoded as %+v, want nil (not in Git)", got[1].Target)
	}
	if got[2].Target == nil || got[2].Target.Namespace != "" {
		t.Errorf("nsless: %+v", got[2].Target)
	}
}

func TestDecodeManagedStatefulSetsErrors(t *testing.T) {
	for body, want := range map[string]string{
		`not json`: "invalid character",
		`{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"kind\":"}]}`:                                                                                                    "StatefulSet shop/web: targetState",
		`{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"}}"}]}`:                                                     `StatefulSet shop/web: targetState is Deployment "web"`,
		`{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\",\"namespace\":\"other\"}}"}]}`: `StatefulSet shop/web: targetState is in namespace "other"`,
	} {
		if _, err := decodeManagedStatefulSets([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", body, err, want)
		}
	}
}

func TestIsOperationInProgress(t *testing.T) {
	// grpc-gateway's answer to FailedPrecondition from argo.SetAppOperation.
	body := []byte(`{"error":"another operation is already in progress","code":9,"message":"another operation is already in progress"}`)
	err := error(&APIError{Method: "POST", Path: "/api/v1/applications/shop/sync", StatusCode: 400, Message: errorMessage(body)})
	if !IsOperationInProgress(err) {
		t.Errorf("IsOperationInProgress(%v) = false", err)
	}
	other := &APIError{StatusCode: 403, Message: errorMessage([]byte(`{"code":7,"message":"permission denied"}`))}
	if IsOperationInProgress(other) || other.Message != "permission denied" {
		t.Errorf("permission denied: %v", other)
	}
	if got := errorMessage([]byte("<html>bad gateway</html>")); got != "<html>bad gateway</html>" {
		t.Errorf("non-JSON body: %q", got)
	}
}

// A target state is checked as a manifest is: a size beyond int64 bytes
// (which Quantity.Value wraps to 15Gi) and an exponent that would take
// minutes to parse are refused, naming the StatefulSet and the field.
func TestDecodeManagedStatefulSetsChecksQuantities(t *testing.T) {
	target := func(size string) string {
		return `{"items":[{"group":"apps","kind":"StatefulSet","namespace":"shop","name":"web","targetState":"{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"data\"},\"spec\":{\"resources\":{\"requests\":{\"storage\":\"` + size + `\"}}}}]}}"}]}`
	}
	for size, want := range map[string]string{
		"18446744089815678976": `StatefulSet shop/web (targetState): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "18446744089815678976": is 8Ei or more`,
		"1E-99999999":          `StatefulSet shop/web (targetState): spec.volumeClaimTemplates[0].spec.resources.requests.storage: "1E-99999999": the exponent -99999999 is beyond ±1000`,
	} {
		got, err := decodeManagedStatefulSets([]byte(target(size)))
		if err == nil || !strings.Contains(err.Error(), want) {
			for _, m := range got {
				if m.Target != nil && len(m.Target.Spec.VolumeClaimTemplates) > 0 {
					q := m.Target.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"]
					t.Logf("%s decoded as %d bytes", size, q.Value())
				}
			}
			t.Errorf("%s: error %v, want one containing %q", size, err, want)
		}
	}
	if _, err := decodeManagedStatefulSets([]byte(target("10Gi"))); err != nil {
		t.Errorf("10Gi: %v", err)
	}
}
