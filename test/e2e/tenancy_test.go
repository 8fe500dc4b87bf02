package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// immutableDescription is what Helm records as a failed upgrade's
// description when the API server refuses the claim templates.
const immutableDescription = `Upgrade "db" failed: cannot patch "db" with kind StatefulSet: StatefulSet.apps "db" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{}: field is immutable`

// forgedRecord is a release record as Helm's Secrets driver writes it,
// forged by someone who may write Secrets in ns: secret is its name,
// labelName and labelVersion its labels, and the record says it is release
// name version of namespace recordNS, failed on immutable templates, with
// manifest.
type forgedRecord struct {
	secret, labelName string
	labelVersion      int
	name, recordNS    string
	version           int
	manifest          string
}

// create creates the record's Secret in ns with c.
func (r forgedRecord) create(t *testing.T, c client.Client, ns string) error {
	t.Helper()
	js, err := json.Marshal(map[string]any{
		"name": r.name, "namespace": r.recordNS, "version": r.version, "manifest": r.manifest,
		"info":  map[string]any{"status": "failed", "description": immutableDescription},
		"chart": map[string]any{"metadata": map[string]any{"name": r.name, "version": "9.9.9"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(js); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return c.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.secret, Labels: map[string]string{
			"owner": "helm", "name": r.labelName, "status": "failed", "version": strconv.Itoa(r.labelVersion),
		}},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(gz.Bytes()))},
	})
}

// A tenant who may write Secrets in its own namespace, the one claimwarden
// reads Helm CLI releases in, forges release records whose manifest is the
// platform's StatefulSet with bigger claims (and tenant B's of the same
// name): one whose record names the platform namespace, one named as Helm
// never names a record, one of the platform release's name. claimwarden
// writes nothing outside the tenant's namespace and says why on the
// records; the tenant's own `helm upgrade` that fails on its templates
// still converges.
func TestTenancyHelmForgedRecord(t *testing.T) {
	cl := started(t)
	ctx := context.Background()
	l := newTenancy(t, cl.admin)
	bind(t, cl.admin, l.tenantA, "claimwarden-helm-cli",
		rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "claimwarden-helm-cli"},
		rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: controllerNamespace})
	ctl := startController(t, cl, "helm-cli", "--helm", "--helm-namespaces", l.tenantA)

	// The platform's and tenant B's StatefulSets are Helm releases "db" of
	// their own namespaces.
	l.createVictims(t, cl, ctl, func(sts *appsv1.StatefulSet) {
		sts.Annotations = map[string]string{"meta.helm.sh/release-name": victim, "meta.helm.sh/release-namespace": sts.Namespace}
		sts.Labels["app.kubernetes.io/managed-by"] = "Helm"
	})

	const user = "tenant-a-developer"
	grant(t, cl.admin, l.tenantA, "secrets-writer", rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "create", "update", "patch"}})
	tenant := tenantClient(t, user)
	both := victimManifest(t, l.platform, "5Gi") + "---\n" + victimManifest(t, l.tenantB, "5Gi")
	// The premise: the tenant cannot write the platform's records itself.
	waitFor(t, "the tenant's Role to apply", nil, func(context.Context) (bool, error) {
		err := forgedRecord{secret: "probe", labelName: "probe", labelVersion: 1, name: "probe", recordNS: l.tenantA, version: 1}.create(t, tenant, l.tenantA)
		return err == nil, err
	})
	err := forgedRecord{secret: "sh.helm.release.v1.db.v2", labelName: victim, labelVersion: 2, name: victim, recordNS: l.platform, version: 2, manifest: both}.create(t, tenant, l.platform)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("the tenant creating a release record in %s: %v, want Forbidden", l.platform, err)
	}

	// The tenant's own release, installed by its CI job.
	h := &helmCLI{t: t, ns: l.tenantA, chart: t.TempDir()}
	web := types.NamespacedName{Namespace: l.tenantA, Name: "web"}
	h.writeChart("0.1.0", "1Gi")
	if out, err := h.run("install", "web", h.chart); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	waitRolloutDone(t, cl.admin, web, 2, "1Gi", ctl)
	w := watch(t, cl.admin, l.platform, l.tenantB)

	// The record says it is the platform namespace's: its manifest's
	// StatefulSet, namespace-less, would be looked for there.
	elsewhere := forgedRecord{secret: "sh.helm.release.v1.forged.v1", labelName: "forged", labelVersion: 1,
		name: "forged", recordNS: l.platform, version: 1, manifest: victimManifest(t, "", "5Gi")}
	// Named as Helm never names a record, with labels saying it is the
	// newest version of release db: trusted, it would idle the record below.
	misnamed := forgedRecord{secret: "db-record", labelName: victim, labelVersion: 2,
		name: victim, recordNS: l.tenantA, version: 2, manifest: both}
	// The platform release's name, recorded in the tenant's namespace,
	// naming the platform's and tenant B's StatefulSets.
	platformName := forgedRecord{secret: "sh.helm.release.v1.db.v1", labelName: victim, labelVersion: 1,
		name: victim, recordNS: l.tenantA, version: 1, manifest: both}
	for _, r := range []forgedRecord{misnamed, elsewhere, platformName} {
		if err := r.create(t, tenant, l.tenantA); err != nil {
			t.Fatalf("forging %s as the tenant: %v", r.secret, err)
		}
	}
	waitToolEvent(t, cl.admin, ctl, "Secret", l.tenantA, elsewhere.secret, "ClaimwardenReleaseReadFailed",
		`the record's namespace "`+l.platform+`" is not the Secret's`)
	waitToolEvent(t, cl.admin, ctl, "Secret", l.tenantA, platformName.secret, source.ReasonNotManaged,
		"StatefulSet "+l.platform+"/"+victim, "StatefulSet "+l.tenantB+"/"+victim)

	// The tenant's legitimate upgrade, refused on its claim templates,
	// converges: claims grown, Pods kept.
	before := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, web, before); err != nil {
		t.Fatal(err)
	}
	pods := podUIDs(t, cl.admin, before)
	h.writeChart("0.2.0", "2Gi")
	if out, err := h.run("upgrade", "web", h.chart); err == nil || !converge.IsTemplatesImmutableMessage(out) {
		t.Fatalf("helm upgrade: %v\n%s\nwant it refused on the claim templates", err, out)
	}
	vcr := waitRolloutDone(t, cl.admin, web, 2, "2Gi", ctl)
	if src := vcr.Status.Proposal.Source; src.Kind != "Secret" || src.Namespace != l.tenantA || src.Name != "sh.helm.release.v1.web.v2" {
		t.Errorf("rollout source %+v, want the tenant's failed record sh.helm.release.v1.web.v2", src)
	}
	assertPatchedOnce(t, cl.admin, l.tenantA, "web", claimNames("web", 2), "2Gi")
	after := &appsv1.StatefulSet{}
	if err := cl.admin.Get(ctx, web, after); err != nil {
		t.Fatal(err)
	}
	if after.UID == before.UID {
		t.Error("the tenant's StatefulSet was not converged (same UID)")
	}
	assertPodsKept(t, cl.admin, after, pods)

	// The misnamed record was read before the upgrade's (the watch delivers
	// in order) and made nothing happen.
	evs, err := eventsRegarding(ctx, cl.admin, "Secret", l.tenantA, misnamed.secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		t.Errorf("event on the misnamed record %s: %s %s", misnamed.secret, e.Reason, e.Note)
	}
	w.assertClean(t)
}
