package usage_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/autoresize"
	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/gate"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// forged is what a tenant's exporter publishes about namespace shop's
// claims, scraped with its labels honoured: data-db-1 120% full under its
// own job; data-db-0 120% full under the kubelet's job, beside the
// kubelet's series; data-db-2, which no kubelet reports, 95% full of a
// capacity twice its claim's.
const forged = `kubelet_volume_stats_capacity_bytes{namespace="shop",persistentvolumeclaim="data-db-1"} 1073741824
kubelet_volume_stats_used_bytes{namespace="shop",persistentvolumeclaim="data-db-1"} 1288490188
kubelet_volume_stats_capacity_bytes{job="kubelet",metrics_path="/metrics",instance="node-b:10250",namespace="shop",persistentvolumeclaim="data-db-0"} 1073741824
kubelet_volume_stats_used_bytes{job="kubelet",metrics_path="/metrics",instance="node-b:10250",namespace="shop",persistentvolumeclaim="data-db-0"} 1288490188
kubelet_volume_stats_capacity_bytes{job="kubelet",metrics_path="/metrics",instance="node-b:10250",namespace="shop",persistentvolumeclaim="data-db-2"} 2147483648
kubelet_volume_stats_used_bytes{job="kubelet",metrics_path="/metrics",instance="node-b:10250",namespace="shop",persistentvolumeclaim="data-db-2"} 2040109465
`

// serveForged serves forged as an exporter's /metrics and returns its address.
func serveForged(t *testing.T) string {
	t.Helper()
	return serveMetrics(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = fmt.Fprint(w, forged)
	}))
}

// db is StatefulSet shop/db of three 1Gi claims, the state autoresize
// decides on with the shipped policies.
func db(t *testing.T, used map[string]usage.Usage) autoresize.State {
	t.Helper()
	tmpl := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("fast"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(int32(3)), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{tmpl}},
	}
	var claims []corev1.PersistentVolumeClaim
	for i := range 3 {
		c := *tmpl.DeepCopy()
		c.Namespace, c.Name = "shop", fmt.Sprintf("data-db-%d", i)
		c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}
		claims = append(claims, c)
	}
	fast := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, AllowVolumeExpansion: ptr.To(true)}
	return autoresize.State{
		Live: sts, Claims: claims, Usage: used,
		Cluster: assess.Cluster{Facts: gate.Facts{
			Namespace:      func(context.Context) (*corev1.Namespace, error) { return nil, nil },
			ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { return nil, nil },
			StorageClass: func(context.Context, *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
				return fast, nil
			},
			Source: policies.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop"},
		}},
	}
}

// A tenant's exporter, scraped by a real Prometheus with its labels
// honoured, cannot grow another namespace's claims: its series under its
// own job are not read (the default selector); under the kubelet's job
// they make the claim ambiguous, or carry a capacity that is not the
// claim's: no decision, said, and no growth.
func TestForgedSeriesDecideNothing(t *testing.T) {
	var objs []client.Object
	objs = append(objs, volume("shop", "data-db-0", map[string]string{storagesim.UsedAnnotation: "100Mi"})...)
	objs = append(objs, volume("shop", "data-db-1", map[string]string{storagesim.UsedAnnotation: "100Mi"})...)
	srv := promenv.StartJobsT(t, time.Second,
		promenv.Job{Name: "kubelet", Targets: []string{serveKubeletStats(t, objs...)}},
		promenv.Job{Name: "tenant-exporter", Targets: []string{serveForged(t)}, HonorLabels: true})
	api := v1.NewAPI(srv.Client(t))

	// Both targets scraped: the kubelet's two claims and the three forged.
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		v, _, _, err := api.Query(ctx, `count(kubelet_volume_stats_capacity_bytes{namespace="shop"})`, time.Now())
		vec, ok := v.(model.Vector)
		return err == nil && ok && len(vec) == 1 && vec[0].Value == 5, nil
	})
	if err != nil {
		t.Fatalf("waiting for both targets to be scraped: %v", err)
	}
	used, err := usage.Reader{API: api, Window: 30 * time.Second}.Claims(context.Background(), "shop", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u := used["data-db-1"]; u.Problem != "" || u.CapacityBytes != 1024*mi || u.UsedBytes != 100*mi {
		t.Errorf("data-db-1 %+v, want the kubelet's 100Mi of 1Gi (the exporter's own job not read)", u)
	}
	if p := used["data-db-0"].Problem; !strings.Contains(p, `{job="kubelet", instance="node-b:10250"}`) || !strings.Contains(p, `{job="kubelet", instance="127.0.0.1:`) {
		t.Errorf("data-db-0's problem %q, want both series named by job and instance", p)
	}

	d, err := autoresize.Decide(context.Background(), shippedPolicies(t), db(t, used), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Growths) != 0 {
		t.Errorf("growths %+v on forged series, want none", d.Growths)
	}
	if len(d.Undecided) != 2 || !strings.HasPrefix(d.Undecided[0], "data-db-0: 2 series of the selector report it, with different figures") ||
		d.Undecided[1] != "data-db-2: the kubelet's series report a capacity of 2Gi, above the claim's status.capacity 1Gi by more than 2%: not this volume's" {
		t.Errorf("undecided %q, want data-db-0 (two series) and data-db-2 (a capacity not its own)", d.Undecided)
	}
}

// shippedPolicies is the shipped policies, as the controller loads them.
func shippedPolicies(t *testing.T) *policies.Engine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := policies.New(ctx, policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
