package converge_test

import (
	"context"
	"strconv"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// cmJournal keeps the record in a ConfigMap next to the StatefulSet: a real
// API object, so a record written by one Converger is read by another one
// created after a "crash", just like the rollout controller's CRD status.
type cmJournal struct{ c client.Client }

func journalName(key types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: key.Namespace, Name: "journal-" + key.Name}
}

func (j cmJournal) Save(ctx context.Context, key types.NamespacedName, rec v1alpha1.PendingRecreate) error {
	n := journalName(key)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Namespace: n.Namespace},
		Data: map[string]string{"uid": rec.UID, "object": string(rec.Object.Raw), "version": strconv.Itoa(int(rec.Version)), "mac": rec.MAC}}
	err := j.c.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		return j.c.Update(ctx, cm)
	}
	return err
}

func (j cmJournal) Load(ctx context.Context, key types.NamespacedName) (*v1alpha1.PendingRecreate, error) {
	var cm corev1.ConfigMap
	err := j.c.Get(ctx, journalName(key), &cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	version, _ := strconv.Atoi(cm.Data["version"]) // a forged record may hold anything
	return &v1alpha1.PendingRecreate{UID: cm.Data["uid"], Object: runtime.RawExtension{Raw: []byte(cm.Data["object"])},
		Version: int32(version), MAC: cm.Data["mac"]}, nil
}

func (j cmJournal) Clear(ctx context.Context, key types.NamespacedName) error {
	n := journalName(key)
	err := j.c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Namespace: n.Namespace}})
	return client.IgnoreNotFound(err)
}

// hookJournal runs afterSave once the record is durable and before the
// Converger deletes anything: the window in which a GitOps tool may re-apply.
type hookJournal struct {
	cmJournal
	afterSave func(ctx context.Context) error
}

func (j hookJournal) Save(ctx context.Context, key types.NamespacedName, rec v1alpha1.PendingRecreate) error {
	if err := j.cmJournal.Save(ctx, key, rec); err != nil {
		return err
	}
	return j.afterSave(ctx)
}
