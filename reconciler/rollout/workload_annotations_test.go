package rollout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/integrations/commitstatus"
	"github.com/claimwarden/claimwarden/reconciler/rollout"
)

// allowWorkloadAnnotations lets a scoped controller use the repository
// annotations of StatefulSets under https://git.example.com/org, in every
// namespace, as the recovery tests write them.
func allowWorkloadAnnotations(o *rollout.Options) {
	o.WorkloadAnnotations = rollout.NewWorkloadAnnotations([]rollout.AnnotationRule{
		{Namespace: "*", RepositoryPrefixes: []string{"https://git.example.com/org"}},
	})
}

// A tenant's StatefulSet naming a repository outside the operator's
// allow-list gets no commit status there, and one Warning event saying so
// however often it is reconciled; one inside the allow-list gets its status.
func TestWorkloadAnnotationsOutsideTheAllowListAreIgnored(t *testing.T) {
	c := started(t)
	scopedController(t, "annotations", noStepLimit, allowWorkloadAnnotations)
	ns := namespace(t, c)
	ctx := context.Background()

	allowed := scopedStatefulSet(ns, "allowed", "annotations", 1, recoveryCommit())
	createReady(t, c, allowed)
	sha := recoveryCommit()
	resizeTo(t, c, client.ObjectKeyFromObject(allowed), "2Gi", sha)
	waitStatus(t, sha, "claimwarden/"+ns+"/allowed", func(s commitstatus.Status) bool { return s.State == commitstatus.Success })

	evilSHA := recoveryCommit()
	evil := scopedStatefulSet(ns, "evil", "annotations", 1, evilSHA)
	// A sibling of the allowed prefix, not below it.
	evil.Annotations[v1alpha1.RepositoryAnnotation] = "https://git.example.com/org-evil/apps.git"
	createReady(t, c, evil)
	// Reconciled again without any change of the annotations: said once.
	touch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"yes"}}}`))
	if err := c.Patch(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "evil"}}, touch); err != nil {
		t.Fatal(err)
	}
	waitEvents(t, c, ns, rollout.ReasonAnnotationIgnored, 1)
	time.Sleep(2 * time.Second)
	ignored := events(t, c, ns, rollout.ReasonAnnotationIgnored)
	if len(ignored) != 1 || ignored[0].Regarding.Name != "evil" {
		t.Fatalf("%d %s events, want one about evil", len(ignored), rollout.ReasonAnnotationIgnored)
	}
	if note := ignored[0].Note; !strings.Contains(note, "git.example.com/org-evil/apps.git") || !strings.Contains(note, ns) {
		t.Errorf("event %q names not the namespace and the repository", note)
	}
	if s, found := statuses.last(evilSHA, "claimwarden/"+ns+"/evil"); found {
		t.Errorf("a status %+v was posted on the commit an ignored annotation names", s)
	}
}
