package argocd

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/reconciler/proposal"
)

const (
	shaA = "0123456789abcdef0123456789abcdef01234567"
	shaB = "89abcdef0123456789abcdef0123456789abcdef"
	// immutableMsg is what argocd-application-controller v3.6.1 recorded for
	// a template bump on kube-apiserver v1.37 (shared/testenv.md).
	immutableMsg = `error when patching "/dev/shm/123": StatefulSet.apps "web" is invalid: spec.volumeClaimTemplates: Invalid value: []core.PersistentVolumeClaim{...}: field is immutable (retried 5 times)`
	forbiddenMsg = `StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`
)

// appFrom parses an Application written as YAML, as the API server would serve it.
func appFrom(t *testing.T, doc string) *application {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	app, err := applicationOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return app
}

const automatedOutOfSync = `
spec:
  source: {repoURL: "https://git.example/shop.git", path: ., targetRevision: HEAD}
  syncPolicy: {automated: {prune: true}}
status:
  sync: {status: OutOfSync, revision: ` + shaB + `}
  resources:
  - {group: apps, version: v1, kind: StatefulSet, namespace: shop, name: web, status: OutOfSync}
  - {group: apps, version: v1, kind: StatefulSet, namespace: shop, name: db, status: Synced}
  - {group: apps, version: v1, kind: Deployment, namespace: shop, name: api, status: OutOfSync}
  - {version: v1, kind: Service, namespace: shop, name: web, status: OutOfSync}
`

func failedSync(automated, syncStatus, resultRevision, msg string) string {
	return `
spec:
  source: {repoURL: "https://git.example/shop.git", path: ., targetRevision: main}
  syncPolicy: {` + automated + `}
status:
  sync: {status: ` + syncStatus + `, revision: ` + shaB + `}
  resources:
  - {group: apps, version: v1, kind: StatefulSet, namespace: shop, name: web, status: OutOfSync}
  operationState:
    phase: Failed
    message: one or more objects failed to apply
    operation: {sync: {revision: ` + resultRevision + `}}
    syncResult:
      revision: ` + resultRevision + `
      resources:
      - {group: apps, version: v1, kind: StatefulSet, namespace: shop, name: web, status: SyncFailed, message: ` + strconv.Quote(msg) + `, syncPhase: Sync}
      - {group: "", version: v1, kind: Service, namespace: shop, name: web, status: Synced, message: service/web unchanged}
`
}

func TestBlocked(t *testing.T) {
	web := types.NamespacedName{Namespace: "shop", Name: "web"}
	for _, tc := range []struct {
		name       string
		doc        string
		want       []types.NamespacedName
		wantFailed bool
	}{{
		name: "automated: every OutOfSync StatefulSet, before any attempt",
		doc:  automatedOutOfSync,
		want: []types.NamespacedName{web},
	}, {
		name: "automated and synced: nothing",
		doc: `
spec: {syncPolicy: {automated: {}}}
status:
  sync: {status: Synced, revision: ` + shaB + `}
  resources: [{group: apps, kind: StatefulSet, namespace: shop, name: web, status: Synced}]
`,
	}, {
		name: "automated but disabled: a manual application, no attempt yet",
		doc: `
spec: {syncPolicy: {automated: {enabled: false}}}
status:
  sync: {status: OutOfSync, revision: ` + shaB + `}
  resources: [{group: apps, kind: StatefulSet, namespace: shop, name: web, status: OutOfSync}]
`,
	}, {
		name:       "manual: a failed sync of the compared revision, field is immutable",
		doc:        failedSync("", "OutOfSync", shaB, immutableMsg),
		want:       []types.NamespacedName{web},
		wantFailed: true,
	}, {
		name:       "manual: the older server's Forbidden message",
		doc:        failedSync("", "OutOfSync", shaB, forbiddenMsg),
		want:       []types.NamespacedName{web},
		wantFailed: true,
	}, {
		name: "manual: another immutable field, which no change of templates explains",
		doc:  failedSync("", "OutOfSync", shaB, `error when patching "/dev/shm/123": StatefulSet.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{...}: field is immutable`),
	}, {
		name: "manual: a failure for another reason",
		doc:  failedSync("", "OutOfSync", shaB, `admission webhook "policy.example" denied the request`),
	}, {
		name: "manual: the failed sync was of an older revision",
		doc:  failedSync("", "OutOfSync", shaA, immutableMsg),
	}, {
		name: "manual: synced since (fixed by hand)",
		doc:  failedSync("", "Synced", shaB, immutableMsg),
	}, {
		name:       "automated with a failed attempt",
		doc:        failedSync("automated: {}", "OutOfSync", shaB, immutableMsg),
		want:       []types.NamespacedName{web},
		wantFailed: true,
	}, {
		name: "multi-source: the failed sync's revisions must all match",
		doc: `
spec:
  sources:
  - {repoURL: "https://charts.example", chart: db, targetRevision: 1.2.3}
  - {repoURL: "https://git.example/values.git", ref: values, targetRevision: main}
status:
  sync: {status: OutOfSync, revisions: [1.2.3, ` + shaB + `]}
  operationState:
    phase: Failed
    syncResult:
      revisions: [1.2.3, ` + shaB + `]
      resources:
      - {group: apps, kind: StatefulSet, namespace: data, name: pg, status: SyncFailed, message: ` + strconv.Quote(immutableMsg) + `}
`,
		want:       []types.NamespacedName{{Namespace: "data", Name: "pg"}},
		wantFailed: true,
	}, {
		name: "no status yet",
		doc:  `spec: {source: {repoURL: "https://git.example/shop.git"}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, failed := appFrom(t, tc.doc).blocked()
			if diff := cmp.Diff(tc.want, got); diff != "" || failed != tc.wantFailed {
				t.Errorf("blocked() failed=%t (want %t), StatefulSets (-want +got):\n%s", failed, tc.wantFailed, diff)
			}
		})
	}
}

func TestProvenance(t *testing.T) {
	for _, tc := range []struct {
		name, doc, repo, rev, key string
	}{{
		name: "single Git source",
		doc:  automatedOutOfSync,
		repo: "https://git.example/shop.git", rev: shaB, key: shaB,
	}, {
		name: "single Helm chart: no repository to post to",
		doc: `
spec: {source: {repoURL: "https://charts.example", chart: db, targetRevision: 1.2.3}}
status: {sync: {status: OutOfSync, revision: 1.2.3}}
`,
		rev: "1.2.3", key: "1.2.3",
	}, {
		name: "chart with values from a Git ref source: the values commit",
		doc: `
spec:
  sources:
  - {repoURL: "https://charts.example", chart: db, targetRevision: 1.2.3}
  - {repoURL: "https://git.example/values.git", ref: values, targetRevision: main}
status: {sync: {status: OutOfSync, revisions: [1.2.3, ` + shaB + `]}}
`,
		repo: "https://git.example/values.git", rev: shaB, key: "1.2.3," + shaB,
	}, {
		name: "a Git directory wins over a ref source listed before it",
		doc: `
spec:
  sources:
  - {repoURL: "https://git.example/values.git", ref: values}
  - {repoURL: "https://git.example/apps.git", path: shop}
status: {sync: {status: OutOfSync, revisions: [` + shaA + `, ` + shaB + `]}}
`,
		repo: "https://git.example/apps.git", rev: shaB, key: shaA + "," + shaB,
	}, {
		name: "user information in the repository URL is never passed on",
		doc: `
spec:
  sources:
  - {repoURL: "https://x-access-token:SECRET@git.example/apps.git", path: shop}
  - {repoURL: "git:SECRET@git.example:o/values.git", ref: values}
status: {sync: {status: OutOfSync, revisions: [` + shaA + `, ` + shaB + `]}}
`,
		repo: "https://git.example/apps.git", rev: shaA, key: shaA + "," + shaB,
	}, {
		name: "a repository URL that cannot be parsed safely is redacted",
		doc: `
spec: {source: {repoURL: "https://a#SECRET@git.example/apps.git", path: shop}}
status: {sync: {status: OutOfSync, revision: ` + shaB + `}}
`,
		repo: proposal.RedactedRepository, rev: shaB, key: shaB,
	}, {
		name: "revisions not yet known",
		doc: `
spec:
  sources:
  - {repoURL: "https://git.example/apps.git", path: shop}
status: {sync: {status: Unknown}}
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			app := appFrom(t, tc.doc)
			repo, rev := app.provenance()
			if repo != tc.repo || rev != tc.rev || app.revisionKey() != tc.key {
				t.Errorf("provenance() = %q, %q, revisionKey() = %q; want %q, %q, %q", repo, rev, app.revisionKey(), tc.repo, tc.rev, tc.key)
			}
		})
	}
}

func TestTemplateLabelKeys(t *testing.T) {
	app := appFrom(t, `
spec:
  sources:
  - {repoURL: "https://git.example/a.git", path: a, kustomize: {commonLabels: {team: storage, env: prod}}}
  - {repoURL: "https://git.example/b.git", path: b, kustomize: {commonLabels: {team: storage}}}
  - {repoURL: "https://git.example/c.git", path: c}
`)
	if diff := cmp.Diff([]string{"env", "team"}, app.templateLabelKeys()); diff != "" {
		t.Errorf("templateLabelKeys (-want +got):\n%s", diff)
	}
	if got := appFrom(t, automatedOutOfSync).templateLabelKeys(); len(got) != 0 {
		t.Errorf("no kustomize options: templateLabelKeys = %v", got)
	}
}

func TestSyncing(t *testing.T) {
	for doc, want := range map[string]bool{
		`operation: {sync: {revision: main}}`:            true,
		`status: {operationState: {phase: Running}}`:     true,
		`status: {operationState: {phase: Terminating}}`: true,
		`status: {operationState: {phase: Failed}}`:      false,
		`status: {operationState: {phase: Succeeded}}`:   false,
		`status: {sync: {status: OutOfSync}}`:            false,
	} {
		if got := appFrom(t, doc).syncing(); got != want {
			t.Errorf("%s: syncing() = %t, want %t", doc, got, want)
		}
	}
}

func TestSyncRequestFor(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		revisions []string
		want      SyncRequest
	}{{
		name: "automated: the target revision (argocd-server refuses another), prune as configured",
		doc:  automatedOutOfSync, revisions: []string{shaB},
		want: SyncRequest{Prune: true},
	}, {
		name: "manual: pinned to the evaluated revision",
		doc:  failedSync("", "OutOfSync", shaB, immutableMsg), revisions: []string{shaB},
		want: SyncRequest{Revision: shaB},
	}, {
		name: "manual multi-source: every source pinned",
		doc: `
spec:
  sources: [{repoURL: "https://charts.example", chart: db}, {repoURL: "https://git.example/v.git", ref: values}]
status: {sync: {status: OutOfSync, revisions: [1.2.3, ` + shaB + `]}}
`,
		revisions: []string{"1.2.3", shaB},
		want:      SyncRequest{Revisions: []string{"1.2.3", shaB}, SourcePositions: []int64{1, 2}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := syncRequestFor(appFrom(t, tc.doc), tc.revisions)
			if len(got.Infos) != 1 || got.Infos[0].Value == "" {
				t.Errorf("Infos = %+v, want one reason", got.Infos)
			}
			got.Infos = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("syncRequestFor (-want +got):\n%s", diff)
			}
		})
	}
}
