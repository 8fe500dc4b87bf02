package autoresize

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/claimwarden/claimwarden/integrations/usage"
	"github.com/claimwarden/claimwarden/policies"
	"github.com/claimwarden/claimwarden/reconciler/assess"
	"github.com/claimwarden/claimwarden/reconciler/gate"
)

const gi = int64(1) << 30

// shipped is the shipped policies, as the controller loads them.
func shipped(t *testing.T) *policies.Engine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e, err := policies.New(ctx, policies.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// shop is StatefulSet shop/web: two replicas with templates logs (1Gi) and
// data (10Gi) on class fast, its claims at those sizes, and the facts of
// namespace shop with a requests.storage quota of hard, 22Gi used.
func shop(hard string) State {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(2)), VolumeClaimTemplates: []corev1.PersistentVolumeClaim{
			template("logs", "1Gi"), template("data", "10Gi"),
		}},
	}
	var claims []corev1.PersistentVolumeClaim
	for _, name := range []string{"logs-web-0", "logs-web-1", "data-web-0", "data-web-1"} {
		size := "10Gi"
		if strings.HasPrefix(name, "logs") {
			size = "1Gi"
		}
		c := template(name, size)
		c.Namespace = "shop"
		c.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
		claims = append(claims, c)
	}
	quota := corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "storage"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse(hard)}},
		Status:     corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourceRequestsStorage: resource.MustParse("22Gi")}},
	}
	fast := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, AllowVolumeExpansion: ptr.To(true)}
	return State{
		Live: sts, Claims: claims,
		Usage: map[string]usage.Usage{
			"data-web-0": {CapacityBytes: 10 * gi, UsedBytes: 85 * gi / 10},
			"data-web-1": {CapacityBytes: 10 * gi, UsedBytes: 5 * gi},
			"logs-web-0": {CapacityBytes: gi, UsedBytes: gi / 10},
		},
		Cluster: assess.Cluster{Facts: gate.Facts{
			Namespace:      func(context.Context) (*corev1.Namespace, error) { return nil, nil },
			ResourceQuotas: func(context.Context) ([]corev1.ResourceQuota, error) { return []corev1.ResourceQuota{quota}, nil },
			StorageClass: func(context.Context, *corev1.PersistentVolumeClaim) (*storagev1.StorageClass, error) {
				return fast, nil
			},
			Source: policies.Source{Kind: "Kustomization", Namespace: "flux-system", Name: "shop"},
		}},
	}
}

func template(name, size string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("fast"),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}},
		},
	}
}

// A claim at 85% proposes its template's growth, to the size that leaves
// 30% free in whole GiB (13Gi), and only its template grows; the grown
// templates are then asked as a proposal and allowed.
func TestDecideGrowsTheTemplateOfTheFullClaim(t *testing.T) {
	d, err := Decide(context.Background(), shipped(t), shop("100Gi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Growths) != 1 {
		t.Fatalf("growths %+v, want data's only", d.Growths)
	}
	g := d.Growths[0]
	if g.Template != "data" || g.Index != 1 || g.From.String() != "10Gi" || g.To.String() != "13Gi" {
		t.Errorf("growth %s[%d] %s → %s, want data[1] 10Gi → 13Gi", g.Template, g.Index, g.From.String(), g.To.String())
	}
	if len(g.Claims) != 1 || g.Claims[0].Name != "data-web-0" || !strings.Contains(strings.Join(g.Claims[0].Messages, " "), "85% used") {
		t.Errorf("claims %+v, want data-web-0 with the policy's words", g.Claims)
	}
	if d.Assessment.Verdict.Denied() {
		t.Errorf("the grown templates are denied: %s", d.Assessment.Denial())
	}
	// Both claims of the template grow by 3Gi: 6Gi, counted for the quota.
	if got := d.Assessment.Growth[string(corev1.ResourceRequestsStorage)]; got != 6*gi {
		t.Errorf("requests.storage growth %d, want 6Gi", got)
	}
}

// The grown templates are decided over the whole proposal: with 5Gi of
// quota left, the 6Gi the two claims grow is denied, and no pull request
// would ask a person to merge what the rollout would refuse.
func TestDecideAsksTheGrownTemplatesAsAProposal(t *testing.T) {
	d, err := Decide(context.Background(), shipped(t), shop("27Gi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Growths) != 1 || !d.Assessment.Verdict.Denied() || !strings.Contains(d.Assessment.Denial(), "quota") {
		t.Errorf("growths %d, denial %q; want data's growth denied by the quota", len(d.Growths), d.Assessment.Denial())
	}
}

// What the namespace's other proposals still have to grow counts as the
// rollout counts it (Rollout.Ahead's InFlight): the 6Gi fit a quota with
// 8Gi left alone, not beside another StatefulSet's 4Gi in flight.
func TestDecideCountsTheProposalsInFlight(t *testing.T) {
	s := shop("30Gi")
	if d, err := Decide(context.Background(), shipped(t), s, nil); err != nil || len(d.Growths) != 1 || d.Assessment.Verdict.Denied() {
		t.Fatalf("alone: growths %+v, denial %q, %v; want data's growth allowed", d.Growths, d.Assessment.Denial(), err)
	}
	s.Cluster.InFlight = assess.Growth{string(corev1.ResourceRequestsStorage): 4 * gi}
	d, err := Decide(context.Background(), shipped(t), s, nil)
	if err != nil || !d.Assessment.Verdict.Denied() || !strings.Contains(d.Assessment.Denial(), "quota") {
		t.Errorf("beside 4Gi in flight: denial %q, %v; want the quota to deny it", d.Assessment.Denial(), err)
	}
}

// Within the cooldown of the last closed pull request nothing grows;
// after it, the same usage proposes again.
func TestDecideWaitsOutTheCooldown(t *testing.T) {
	for since, want := range map[time.Duration]int{time.Hour: 0, 25 * time.Hour: 1} {
		s := shop("100Gi")
		s.SinceLast = &since
		d, err := Decide(context.Background(), shipped(t), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Growths) != want {
			t.Errorf("%s after the last pull request: %d growths, want %d", since, len(d.Growths), want)
		}
	}
}

// Claims the kubelets do not report, and claims of ordinals the
// StatefulSet does not have, are not asked about.
func TestQuestionsOnlyForReportedClaimsOfTheReplicas(t *testing.T) {
	s := shop("100Gi")
	s.Live.Spec.Replicas = ptr.To(int32(1))
	qs, err := questions(s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range qs {
		got = append(got, q.Claim)
	}
	if strings.Join(got, ",") != "logs-web-0,data-web-0" {
		t.Errorf("questions about %v, want logs-web-0 and data-web-0", got)
	}
}

// A claim whose resize is in flight is not asked (the kubelet reports the
// smaller volume, and the policies would grow it again on top of its
// request), nor said undecided; once resized, its fullness is of the new
// capacity even before the kubelet's next sample, or, where the kubelet's
// capacity is more than 20% below the new one, it is undecided until the
// kubelet reports the grown file system.
func TestDecideWaitsForAResizeInFlight(t *testing.T) {
	s := shop("100Gi")
	s.Claims[2].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("13Gi")
	d, err := Decide(context.Background(), shipped(t), s, nil)
	if err != nil || len(d.Growths) != 0 || len(d.Undecided) != 0 {
		t.Errorf("growths %+v, undecided %q (%v) while data-web-0 resizes to 13Gi, want none", d.Growths, d.Undecided, err)
	}
	s.Claims[2].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("12Gi")
	s.Claims[2].Status.Capacity[corev1.ResourceStorage] = resource.MustParse("12Gi")
	d, err = Decide(context.Background(), shipped(t), s, nil)
	if err != nil || len(d.Growths) != 0 || len(d.Undecided) != 0 {
		t.Errorf("growths %+v, undecided %q (%v) with data-web-0 at 12Gi (8.5Gi used: 71%%), want none", d.Growths, d.Undecided, err)
	}
	s.Claims[2].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("13Gi")
	s.Claims[2].Status.Capacity[corev1.ResourceStorage] = resource.MustParse("13Gi")
	d, err = Decide(context.Background(), shipped(t), s, nil)
	if err != nil || len(d.Growths) != 0 || len(d.Undecided) != 1 || !strings.HasPrefix(d.Undecided[0], "data-web-0: the kubelet's series report a capacity of 10Gi, below the claim's status.capacity 13Gi") {
		t.Errorf("growths %+v, undecided %q (%v) with data-web-0 at 13Gi, the kubelet's 10Gi, want data-web-0 undecided", d.Growths, d.Undecided, err)
	}
}

// A claim whose series disagree, or whose kubelet capacity is not its
// status.capacity, is not asked about: the 85% full data-web-0 does not
// grow on a forged report, a forged huge capacity does not hide it, and
// the decision says why of each.
func TestDecideLeavesUndecidedClaims(t *testing.T) {
	s := shop("100Gi")
	s.Usage["data-web-0"] = usage.Usage{Problem: "2 series of the selector report it, with different figures"}
	s.Usage["data-web-1"] = usage.Usage{CapacityBytes: 1000 * gi, UsedBytes: 9 * gi}
	d, err := Decide(context.Background(), shipped(t), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"data-web-0: 2 series of the selector report it, with different figures",
		"data-web-1: the kubelet's series report a capacity of 1000Gi, above the claim's status.capacity 10Gi by more than 2%: not this volume's",
	}
	if len(d.Growths) != 0 || strings.Join(d.Undecided, "\n") != strings.Join(want, "\n") {
		t.Errorf("growths %+v, undecided %q; want none, and %q", d.Growths, d.Undecided, want)
	}
	qs, err := questions(s)
	if err != nil || len(qs) != 1 || qs[0].Claim != "logs-web-0" {
		t.Errorf("questions %+v (%v), want logs-web-0's only", qs, err)
	}
}

// The claims of a StatefulSet are its templates' for its ordinals, from
// spec.ordinals.start, and a StatefulSet of more claims than the bound is
// refused (diff.Ordinals).
func TestClaimSlots(t *testing.T) {
	s := shop("100Gi")
	s.Live.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	slots, err := claimSlots(s.Live, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, slot := range slots {
		got = append(got, fmt.Sprintf("%s/%s/%d", slot.name, slot.template.Name, slot.ordinal))
	}
	if strings.Join(got, ",") != "logs-web-5/logs/5,logs-web-6/logs/6,data-web-5/data/5,data-web-6/data/6" {
		t.Errorf("slots %v, want ordinals 5 and 6 of both templates", got)
	}
	if _, err := claimSlots(s.Live, 3); err == nil || !strings.Contains(err.Error(), "maxClaimsPerStatefulSet") {
		t.Errorf("4 claims over a bound of 3: %v, want refused", err)
	}
}
