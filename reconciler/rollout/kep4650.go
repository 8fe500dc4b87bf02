package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KEP-4650 (StatefulSetUpdateVolumeClaimTemplate, aimed at alpha in 1.38)
// lets the StatefulSet controller update claims itself: with
// spec.volumeClaimUpdateStrategy.type InPlace it patches them. claimwarden
// must not race it for the same claims, nor orphan-re-create a StatefulSet
// whose templates the server accepts changing.
const (
	statefulSetSpecSchema    = "io.k8s.api.apps.v1.StatefulSetSpec"
	claimUpdateStrategyField = "volumeClaimUpdateStrategy"
	// ClaimUpdateInPlace is KEP-4650's strategy under which Kubernetes
	// updates the claims.
	ClaimUpdateInPlace = "InPlace"
)

// HasClaimUpdateStrategy reports whether an OpenAPI v3 document of apps/v1
// (the server's /openapi/v3/apis/apps/v1) gives StatefulSetSpec the
// volumeClaimUpdateStrategy field: what the server serves, read from the
// server, rather than guessed from its version.
func HasClaimUpdateStrategy(doc []byte) (bool, error) {
	var d struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return false, fmt.Errorf("reading the apps/v1 OpenAPI document: %w", err)
	}
	spec, ok := d.Components.Schemas[statefulSetSpecSchema]
	if !ok {
		return false, fmt.Errorf("the apps/v1 OpenAPI document has no %s", statefulSetSpecSchema)
	}
	_, ok = spec.Properties[claimUpdateStrategyField]
	return ok, nil
}

// claimUpdates knows whether the server has KEP-4650, asked until it has
// answered once (a failed read at most once per claimUpdatesRetry: every
// reconcile waits for the answer, so a failing endpoint must not cost each
// one a round trip), and reads a StatefulSet's claim update strategy only
// where it does.
type claimUpdates struct {
	config *rest.Config
	reader client.Reader // uncached: the typed StatefulSet drops fields it does not know

	mu        sync.Mutex
	known     bool
	supported bool
	failedAt  time.Time
}

// claimUpdatesRetry is how soon a failed read of the OpenAPI document is
// tried again; until then the controller goes on as without KEP-4650.
const claimUpdatesRetry = time.Minute

// byKubernetes reports whether Kubernetes itself updates sts's claims
// (KEP-4650 served and the StatefulSet's strategy InPlace).
func (k *claimUpdates) byKubernetes(ctx context.Context, sts *appsv1.StatefulSet) (bool, error) {
	supported, err := k.served()
	if err != nil || !supported {
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "reading whether the API server updates claims itself (KEP-4650); going on as if not")
		}
		return false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	if err := k.reader.Get(ctx, client.ObjectKeyFromObject(sts), u); err != nil {
		return false, fmt.Errorf("reading the claim update strategy of StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
	}
	strategy, _, _ := unstructured.NestedString(u.Object, "spec", claimUpdateStrategyField, "type")
	return strategy == ClaimUpdateInPlace, nil
}

func (k *claimUpdates) served() (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.known || k.config == nil || time.Since(k.failedAt) < claimUpdatesRetry {
		return k.supported, nil
	}
	supported, err := servedBy(k.config)
	if err != nil {
		k.failedAt = time.Now()
		return false, err
	}
	k.known, k.supported = true, supported
	return supported, nil
}

// servedBy reads the apps/v1 OpenAPI v3 document of the server of config.
func servedBy(config *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return false, err
	}
	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		return false, err
	}
	gv, ok := paths["apis/apps/v1"]
	if !ok {
		return false, fmt.Errorf("the API server serves no OpenAPI v3 document for apps/v1")
	}
	doc, err := gv.Schema("application/json")
	if err != nil {
		return false, err
	}
	return HasClaimUpdateStrategy(doc)
}
