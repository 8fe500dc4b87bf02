package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

const manifest = `---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
---
# Source: web/templates/statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels: {helm.sh/chart: web-0.2.0}
spec:
  replicas: 3
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
  volumeClaimTemplates:
  - metadata: {name: data, labels: {helm.sh/chart: web-0.2.0}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 2Gi}}
`

func release(version int) *rspb.Release {
	return &rspb.Release{
		Name: "web", Namespace: "shop", Version: version, Manifest: manifest,
		Info: &rspb.Info{Status: rcommon.StatusFailed},
	}
}

// encode is Helm's encoding (storage driver, encodeRelease): JSON, gzip, base64.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(js); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))
}

func TestStatefulSetsOfRelease(t *testing.T) {
	stss, err := StatefulSets(&Release{Name: "web", Namespace: "shop", Version: 4, Manifest: manifest})
	if err != nil {
		t.Fatal(err)
	}
	if len(stss) != 1 {
		t.Fatalf("got %d StatefulSets", len(stss))
	}
	s := stss[0]
	// Helm applies objects without a namespace in the release's.
	if s.Namespace != "shop" || s.Name != "web" {
		t.Errorf("StatefulSet %s/%s", s.Namespace, s.Name)
	}
	if got := s.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(); got != "2Gi" {
		t.Errorf("storage %s", got)
	}

	t.Run("a bad StatefulSet is an error naming the release", func(t *testing.T) {
		bad := &Release{Name: "web", Namespace: "shop", Version: 5, Manifest: strings.Replace(manifest, "storage: 2Gi", "storage: lots", 1)}
		_, err := StatefulSets(bad)
		if err == nil || !strings.Contains(err.Error(), "release shop/web version 5") {
			t.Errorf("got %v", err)
		}
	})
}
