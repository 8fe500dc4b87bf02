package usage_test

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/test/promenv"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

const mi = 1 << 20

// volume is a bound claim of 1Gi on a volume of the storage simulator.
func volume(ns, name string, annotations map[string]string) []client.Object {
	pvName := "pv-" + ns + "-" + name
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: pvName},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: storagesim.DefaultProvisioner, VolumeHandle: pvName}}},
	}
	return []client.Object{pvc, pv}
}

// serveKubeletStats serves the simulator's volume statistics of objs on a
// loopback port, as a kubelet's /metrics, and returns its address.
func serveKubeletStats(t *testing.T, objs ...client.Object) string {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	sim := &storagesim.Simulator{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()}
	return serveMetrics(t, sim.MetricsHandler())
}

// serveMetrics serves h as /metrics on a loopback port until the test
// ends, and returns its address: a target Prometheus scrapes.
func serveMetrics(t *testing.T, h http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// Usage is read from a real Prometheus scraping the kubelet's statistics
// (played by the storage simulator): a volume filling at 60Mi a minute
// grows at about 1Mi a second and says when it is full; a steady one does
// not grow; another namespace's is not read.
func TestClaimsFromARealPrometheus(t *testing.T) {
	var objs []client.Object
	objs = append(objs, volume("shop", "data-db-0", map[string]string{storagesim.UsedAnnotation: "256Mi", storagesim.FillPerMinuteAnnotation: "60Mi"})...)
	objs = append(objs, volume("shop", "data-db-1", map[string]string{storagesim.UsedAnnotation: "100Mi"})...)
	objs = append(objs, volume("other", "data-x-0", map[string]string{storagesim.UsedAnnotation: "900Mi"})...)
	srv := promenv.StartT(t, time.Second, serveKubeletStats(t, objs...))
	r := usage.Reader{API: v1.NewAPI(srv.Client(t)), Window: 30 * time.Second}

	var got map[string]usage.Usage
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = r.Claims(ctx, "shop", time.Now())
		// deriv needs samples over a few scrapes before its slope settles.
		return err == nil && len(got) == 2 && got["data-db-0"].UsedBytes > 256*mi+8*mi, nil
	})
	if err != nil {
		t.Fatalf("waiting for usage of both claims to be scraped: %v (last %+v)", err, got)
	}
	filling, steady := got["data-db-0"], got["data-db-1"]
	if filling.CapacityBytes != 1024*mi || filling.Inodes != 65536 || filling.InodesUsed == 0 {
		t.Errorf("data-db-0 %+v, want 1Gi and 65536 inodes, some used", filling)
	}
	if g := filling.GrowthBytesPerSecond; math.Abs(g-mi)/mi > 0.2 {
		t.Errorf("data-db-0 grows %.0f bytes/s, want about %d (60Mi a minute)", g, mi)
	}
	ttf, ok := filling.TimeToFull()
	want := time.Duration(float64(filling.CapacityBytes-filling.UsedBytes)/filling.GrowthBytesPerSecond) * time.Second
	if !ok || ttf < want-time.Second || ttf > want+time.Second {
		t.Errorf("time to full %v (%v), want about %v", ttf, ok, want)
	}
	if steady.UsedBytes != 100*mi || steady.GrowthBytesPerSecond != 0 {
		t.Errorf("data-db-1 %+v, want 100Mi used, not growing", steady)
	}
	if _, ok := steady.TimeToFull(); ok {
		t.Error("a volume that does not grow has a time to full")
	}
	if f := steady.UsedFraction(); math.Abs(f-100.0/1024) > 1e-9 {
		t.Errorf("data-db-1 used fraction %v", f)
	}
	// Several namespaces in one read, each its own claims.
	all, err := r.Namespaces(context.Background(), []string{"shop", "other", "empty"}, time.Now())
	if err != nil || len(all) != 2 || len(all["shop"]) != 2 || all["other"]["data-x-0"].UsedBytes != 900*mi {
		t.Errorf("shop, other and empty read at once: %+v, %v; want shop's two claims and other's one", all, err)
	}
}

func TestClaimsRefusesWhatIsNoNamespace(t *testing.T) {
	for _, ns := range []string{"", `shop"} or vector(1) or {x="`, "Shop", fmt.Sprintf("%070d", 0), "a|.*"} {
		if _, err := (usage.Reader{}).Claims(context.Background(), ns, time.Now()); err == nil {
			t.Errorf("namespace %q was put into a query", ns)
		}
		if _, err := (usage.Reader{}).Namespaces(context.Background(), []string{"shop", ns}, time.Now()); err == nil {
			t.Errorf("namespace %q was put into a query beside shop", ns)
		}
	}
}
