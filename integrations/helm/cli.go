package helm

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/reconciler/converge"
	"github.com/claimwarden/claimwarden/reconciler/outcome"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// ReleaseSecretKind is the Source kind of proposals from releases the Helm
// CLI (or any Helm SDK client but helm-controller) made: the tool object is
// the failed release's record, a Secret `kubectl get` finds by its name.
const ReleaseSecretKind = "Secret"

// The labels Helm's Secrets driver puts on each release record.
const (
	labelOwner   = "owner"
	labelName    = "name"
	labelStatus  = "status"
	labelVersion = "version"
	ownerHelm    = "helm"
)

// ReasonUpgradeAgain is the event on a release record whose StatefulSets
// were converged.
const ReasonUpgradeAgain = "ClaimwardenUpgradeAgain"

// secretGVK is what release records are watched as: their metadata only,
// which holds all Read needs (the release's name, version and status).
var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// NewReleaseSecret is an empty release record, metadata only.
func NewReleaseSecret() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(secretGVK)
	return m
}

// CLIReleases is the Helm CLI as a source.Tool: when the newest version of a
// release failed on immutable volumeClaimTemplates (`helm upgrade` from CI,
// say), its desired StatefulSets are read from that version's record and
// converged. There is nothing to nudge: the user's next `helm upgrade` of
// the same chart and values succeeds, and the release record says so in an
// event. Releases helm-controller made are HelmReleases' (HelmReleases).
type CLIReleases struct {
	// Cached lists a release's other records (metadata, from the watch).
	Cached client.Reader
	// Reader reads release records and StatefulSets uncached.
	Reader client.Reader
	// Recorder records the event that asks for the next `helm upgrade`.
	Recorder outcome.Recorder
	// MaxReleaseBytes bounds one release record unpacked; default
	// DefaultMaxReleaseBytes.
	MaxReleaseBytes int64
}

var _ source.Tool = (*CLIReleases)(nil)

// Kind implements source.Tool.
func (*CLIReleases) Kind() string { return ReleaseSecretKind }

// NewObject implements source.Tool.
func (*CLIReleases) NewObject() client.Object { return NewReleaseSecret() }

// recordOf is what a release record's labels say.
type recordOf struct {
	name, status string
	version      int
}

// labelsOf reads a release record's labels; a Secret whose name is not
// the one Helm's driver gives those labels is no record (its labels would
// make claimwarden read another Secret).
func labelsOf(obj client.Object) (recordOf, bool) {
	l := obj.GetLabels()
	v, err := strconv.Atoi(l[labelVersion])
	if l[labelOwner] != ownerHelm || l[labelName] == "" || err != nil || v <= 0 || obj.GetName() != SecretName(l[labelName], v) {
		return recordOf{}, false
	}
	return recordOf{name: l[labelName], status: l[labelStatus], version: v}, true
}

// Read implements source.Tool. Only the newest version of a release is
// acted on, and only when it failed: a newer version (the next attempt, a
// successful upgrade, or a rollback, whose target claimwarden never
// converges towards) makes an older failure idle, so that what it proposed
// and never converged is dropped.
func (c *CLIReleases) Read(ctx context.Context, obj client.Object) (source.Reading, error) {
	rec, ok := labelsOf(obj)
	if !ok {
		return source.Reading{State: source.Waiting}, nil // not a release record
	}
	if rec.status != rcommon.StatusFailed.String() {
		return source.Reading{State: source.Idle}, nil
	}
	newest, err := c.newestVersion(ctx, obj.GetNamespace(), rec.name)
	if err != nil {
		return source.Reading{}, err
	}
	if newest > rec.version {
		return source.Reading{State: source.Idle}, nil
	}
	return source.Reading{
		State:    source.Blocked,
		Revision: fmt.Sprintf("%s.v%d", rec.name, rec.version),
		Key:      string(obj.GetUID()),
	}, nil
}

// newestVersion is the highest version of release name recorded in ns.
func (c *CLIReleases) newestVersion(ctx context.Context, ns, name string) (int, error) {
	records, err := c.records(ctx, ns, name)
	if err != nil {
		return 0, err
	}
	newest := 0
	for i := range records {
		if r, ok := labelsOf(&records[i]); ok && r.version > newest {
			newest = r.version
		}
	}
	return newest, nil
}

// records are the records of release name in ns, from the watch's cache.
func (c *CLIReleases) records(ctx context.Context, ns, name string) ([]metav1.PartialObjectMetadata, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(secretGVK.GroupVersion().WithKind("SecretList"))
	if err := c.Cached.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{labelOwner: ownerHelm, labelName: name}); err != nil {
		return nil, fmt.Errorf("listing the records of Helm release %s/%s: %w", ns, name, err)
	}
	return list.Items, nil
}

// Related names the other records of obj's release: a new version changes
// whether an older failure is still the newest.
func (c *CLIReleases) Related(ctx context.Context, obj client.Object) []types.NamespacedName {
	rec, ok := labelsOf(obj)
	if !ok {
		return nil
	}
	records, err := c.records(ctx, obj.GetNamespace(), rec.name)
	if err != nil {
		return nil // the cache is being started or stopped; obj's own reconcile goes on
	}
	var out []types.NamespacedName
	for _, s := range records {
		if s.Name != obj.GetName() {
			out = append(out, types.NamespacedName{Namespace: s.Namespace, Name: s.Name})
		}
	}
	return out
}

// Desired implements source.Tool: the StatefulSets of the failed release's
// record that Helm could not apply because of their volumeClaimTemplates.
// A record anybody able to write Secrets in the namespace could forge: it
// must name the Secret's own namespace, and only the StatefulSets the live
// objects say are this release's are proposed (Manages).
func (c *CLIReleases) Desired(ctx context.Context, obj client.Object) (source.Desired, error) {
	rec, _ := labelsOf(obj)
	limit := c.MaxReleaseBytes
	if limit <= 0 {
		limit = DefaultMaxReleaseBytes
	}
	rel, err := ReadRelease(ctx, c.Reader, obj.GetNamespace(), rec.name, rec.version, limit)
	if err != nil {
		return source.Desired{}, readFailed(err)
	}
	what := fmt.Sprintf("Helm release %s/%s version %d", rel.Namespace, rel.Name, rel.Version)
	if rel.Namespace != obj.GetNamespace() {
		// Helm keeps a release's records in its own namespace; a record
		// naming another one is forged, and its StatefulSets are not
		// looked for there.
		return source.Desired{}, readFailed(fmt.Errorf("release record Secret %s/%s: the record's namespace %q is not the Secret's", obj.GetNamespace(), obj.GetName(), rel.Namespace))
	}
	if rel.Status != rcommon.StatusFailed {
		return source.Desired{Waiting: what + " is no longer failed"}, nil
	}
	if !converge.IsImmutableTemplateError(fmt.Errorf("%s", rel.Description)) {
		return source.Desired{NothingToDo: fmt.Sprintf("%s failed for a reason that is not immutable volumeClaimTemplates (%q): not one claimwarden can resolve", what, rel.Description)}, nil
	}
	stss, err := StatefulSets(rel)
	if err != nil {
		return source.Desired{}, readFailed(err)
	}
	var d source.Desired
	if rel.ChartName != "" || rel.ChartVersion != "" {
		d.Chart = rel.ChartName + "@" + rel.ChartVersion
		d.Revisions = []string{rel.ChartVersion}
	}
	// Which of them are this release's is the live objects' to say (Manages).
	d.Candidates = stss
	d.NothingToDo = fmt.Sprintf("%s (chart %s) renders no StatefulSet of its own whose volumeClaimTemplates change: its failure is not one claimwarden can resolve", what, d.Chart)
	return d, nil
}

// Nudge implements source.Tool: nobody is there to ask, so the release
// record says what to do next, once, naming every StatefulSet converged for
// it (events about one record with one reason are merged into one series,
// which shows only the first one's words).
func (c *CLIReleases) Nudge(ctx context.Context, n source.Nudge) error {
	rec := NewReleaseSecret()
	if err := c.Cached.Get(ctx, types.NamespacedName{Namespace: n.Source.Namespace, Name: n.Source.Name}, rec); err != nil {
		return client.IgnoreNotFound(err) // a newer release pruned it: nothing to say
	}
	msg := fmt.Sprintf("%s converged to the volumeClaimTemplates of the failed release %s (chart %s)", statefulSets(n.Converged), n.Source.Name, n.Source.Chart)
	if len(n.Unconverged) == 0 {
		msg += ": run the same `helm upgrade` again and it succeeds"
	} else {
		its, it := "its VolumeClaimRollout", "it"
		if len(n.Unconverged) > 1 {
			its, it = "their VolumeClaimRollouts", "them"
		}
		msg += fmt.Sprintf("; %s did not (see %s): the same `helm upgrade` fails on %s again", statefulSets(n.Unconverged), its, it)
	}
	c.Recorder.Eventf(rec, nil, n.Source, corev1.EventTypeNormal, ReasonUpgradeAgain, "Converged", "%s", msg)
	return nil
}

// statefulSets names keys for people: "StatefulSet ci/web",
// "StatefulSets ci/db and ci/web", "StatefulSets ci/a, ci/b and ci/c".
func statefulSets(keys []types.NamespacedName) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	if len(names) == 1 {
		return "StatefulSet " + names[0]
	}
	return "StatefulSets " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
