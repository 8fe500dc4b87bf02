package autoresize

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// A check that finds what the status says writes nothing: a StatefulSet at
// rest costs no write per interval. One that finds something else writes.
func TestRecordWritesOnlyWhatChanged(t *testing.T) {
	s := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	vcr := &v1alpha1.VolumeClaimRollout{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	patches := 0
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(vcr).WithStatusSubresource(vcr).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
	ctl := &Controller{Client: c, Log: logr.Discard()}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	at := func(sec int) metav1.Time { return metaTime(time.Unix(1_800_000_000+int64(sec), 0)) }

	st := v1alpha1.AutoresizeStatus{Usage: "44% data-web-0", Message: "no claim needs to grow", LastChecked: at(0)}
	ctl.record(context.Background(), sts, st)
	st.LastChecked = at(60)
	ctl.record(context.Background(), sts, st)
	if patches != 1 {
		t.Errorf("%d status writes for two checks that found the same, want 1", patches)
	}
	st.Usage, st.LastChecked = "45% data-web-0", at(120)
	ctl.record(context.Background(), sts, st)
	got := &v1alpha1.VolumeClaimRollout{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(vcr), got); err != nil {
		t.Fatal(err)
	}
	if patches != 2 || got.Status.Autoresize == nil || got.Status.Autoresize.Usage != "45% data-web-0" || !got.Status.Autoresize.LastChecked.Equal(&st.LastChecked) {
		t.Errorf("after a change: %d writes, status %+v; want 2, the new usage checked at %v", patches, got.Status.Autoresize, st.LastChecked)
	}
}
