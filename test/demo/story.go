package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/storagesim"
)

// The objects of the story.
const (
	namespace    = "demo"
	storageClass = "demo-ssd"
	stsName      = "db"
	sizeBefore   = "1Gi"
	sizeAfter    = "2Gi"
)

var stsKey = types.NamespacedName{Namespace: namespace, Name: stsName}

// readyTimeout bounds waiting for the StatefulSet's Pods (scheduling, binding
// simulated volumes, kwok marking them Ready): seconds normally.
const readyTimeout = time.Minute

// tell runs the story on a started cluster.
func tell(ctx context.Context, cl *cluster, o options, out *printer) error {
	pods, vcr, err := createDatabase(ctx, cl, o, out)
	if err != nil {
		return err
	}
	if err := showRefusal(ctx, cl, out); err != nil {
		return err
	}
	began, err := replaceLikeToday(ctx, cl, pods, out)
	if err != nil {
		return err
	}
	return followRollout(ctx, cl, o, vcr, began, pods, out)
}

// createDatabase creates the StatefulSet with 1Gi claims and waits until it
// is Ready and claimwarden reports its claims compatible. It returns the Pod
// UIDs and the rollout as it is then, from which step 5 watches.
func createDatabase(ctx context.Context, cl *cluster, o options, out *printer) (map[string]types.UID, *v1alpha1.VolumeClaimRollout, error) {
	c := cl.client
	out.step("Creating a database: StatefulSet " + stsName + " with " + sizeBefore + " volumes")
	if err := fixtures.Namespace(ctx, c, namespace); err != nil {
		return nil, nil, err
	}
	if err := c.Create(ctx, storagesim.StorageClass(storageClass, true)); err != nil {
		return nil, nil, err
	}
	out.ok(fmt.Sprintf("namespace %s, StorageClass %s (allowVolumeExpansion: true)", namespace, storageClass))
	start := time.Now()
	sts := fixtures.StatefulSet(namespace, stsName, int32(o.replicas), storageClass, sizeBefore)
	if err := c.Create(ctx, sts); err != nil {
		return nil, nil, err
	}
	if err := fixtures.WaitReady(ctx, c, stsKey, readyTimeout); err != nil {
		return nil, nil, err
	}
	out.ok(fmt.Sprintf("StatefulSet %s: %d/%d Pods Ready after %s, volumeClaimTemplate \"data\" requests %s",
		stsName, o.replicas, o.replicas, since(start), sizeBefore))

	vcr, err := waitRollout(ctx, cl, readyTimeout, func(v *v1alpha1.VolumeClaimRollout) bool {
		return apimeta.IsStatusConditionTrue(v.Status.Conditions, meta.ReadyCondition) && claimsAt(v, sizeBefore, o.replicas)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("claimwarden did not report the new StatefulSet's claims compatible: %w", err)
	}
	out.ok(fmt.Sprintf("claimwarden manages it already: VolumeClaimRollout %s is Ready, %s claims compatible", vcr.Name, vcr.Status.Progress))
	if err := showClaims(ctx, c, out); err != nil {
		return nil, nil, err
	}
	pods, err := podUIDs(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	showPods(pods, nil, out)
	return pods, vcr, nil
}

// showRefusal tries the obvious: edit the template. The API server refuses.
func showRefusal(ctx context.Context, cl *cluster, out *printer) error {
	out.step("The problem: volumeClaimTemplates cannot be changed")
	out.cmd(fmt.Sprintf("kubectl edit statefulset %s -n %s    # storage: %s -> %s", stsName, namespace, sizeBefore, sizeAfter))
	var sts appsv1.StatefulSet
	if err := cl.client.Get(ctx, stsKey, &sts); err != nil {
		return err
	}
	fixtures.SetTemplateSize(sizeAfter)(&sts)
	err := cl.client.Update(ctx, &sts)
	switch {
	case err == nil:
		return errors.New("the API server accepted a volumeClaimTemplates change: this cluster already has KEP-4650, and the demo assumes it does not")
	case !apierrors.IsInvalid(err):
		return fmt.Errorf("updating the StatefulSet: %w", err)
	}
	out.warn("the API server refuses:")
	out.quote(refusal(err))
	return nil
}

// refusal is the API server's answer, a line per cause, with the rejected
// values elided.
func refusal(err error) string {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 {
		return err.Error()
	}
	d := st.Status().Details
	lines := []string{fmt.Sprintf("%s.%s %q is invalid:", d.Kind, d.Group, d.Name)}
	for _, c := range d.Causes {
		lines = append(lines, "  "+c.Field+": "+elideValue(c.Message))
	}
	return strings.Join(lines, "\n")
}

// elideValue replaces the rejected value in "... Invalid value: <value>: <why>"
// with [...]: for volumeClaimTemplates the value is the whole template list
// printed as Go structs, which buries why at the end of a very long line.
func elideValue(msg string) string {
	const invalid = "Invalid value: "
	i := strings.Index(msg, invalid)
	if i < 0 {
		return msg
	}
	rest := msg[i+len(invalid):]
	j := strings.LastIndex(rest, ": ")
	if j < 0 {
		return msg
	}
	return msg[:i] + invalid + "[...]" + rest[j:]
}

// replaceLikeToday does the orphan delete and re-create users do today, and
// shows that the Pods survive it. It returns when the new StatefulSet exists.
func replaceLikeToday(ctx context.Context, cl *cluster, pods map[string]types.UID, out *printer) (time.Time, error) {
	out.step("The workaround today: orphan-delete the StatefulSet and create it again")
	out.cmd(fmt.Sprintf("kubectl delete statefulset %s -n %s --cascade=orphan", stsName, namespace))
	out.cmd(fmt.Sprintf("kubectl create -f %s.yaml    # now with storage: %s", stsName, sizeAfter))
	began := time.Now()
	if err := fixtures.ReplaceTemplates(ctx, cl.client, stsKey, fixtures.SetTemplateSize(sizeAfter)); err != nil {
		return time.Time{}, err
	}
	if err := fixtures.WaitReady(ctx, cl.client, stsKey, readyTimeout); err != nil {
		return time.Time{}, err
	}
	now, err := podUIDs(ctx, cl.client)
	if err != nil {
		return time.Time{}, err
	}
	if err := sameUIDs(pods, now); err != nil {
		return time.Time{}, err
	}
	out.ok(fmt.Sprintf("StatefulSet %s re-created with a %s template; its Pods kept running (same UIDs)", stsName, sizeAfter))
	out.note(fmt.Sprintf("But the StatefulSet controller never touches existing claims: without help they stay %s forever.", sizeBefore))
	out.note("claimwarden sees the new template and patches each claim, highest ordinal first, one at a time.")
	return began, nil
}

// waitRollout polls the VolumeClaimRollout until done says so, failing early
// when the controller or the simulator has died.
func waitRollout(ctx context.Context, cl *cluster, timeout time.Duration, done func(*v1alpha1.VolumeClaimRollout) bool) (*v1alpha1.VolumeClaimRollout, error) {
	var vcr v1alpha1.VolumeClaimRollout
	err := wait.PollUntilContextTimeout(ctx, fixtures.Poll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := cl.alive(); err != nil {
			return false, err
		}
		if err := cl.client.Get(ctx, stsKey, &vcr); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return done(&vcr), nil
	})
	return &vcr, err
}

// since is the time since t, rounded for reading.
func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }
