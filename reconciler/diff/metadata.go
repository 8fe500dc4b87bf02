package diff

import "strings"

// trackingPrefixes are key prefixes GitOps tools own; see IsTrackingKey.
var trackingPrefixes = []string{
	"argocd.argoproj.io/",
	"kustomize.toolkit.fluxcd.io/",
	"helm.toolkit.fluxcd.io/",
	"meta.helm.sh/",
}

// IsTrackingKey reports whether a label or annotation key is a GitOps
// tracking key or Helm bookkeeping. Such keys are never copied onto PVCs,
// whatever the source: Argo CD and Flux would then count the PVCs as
// resources they manage and prune or diff them; Helm's
// meta.helm.sh/release-name and -namespace would make a claim look owned by a
// release; and helm.sh/chart, "<chart>-<version>" by the chart conventions,
// would patch every claim on every chart release, a patch version included.
func IsTrackingKey(k string) bool {
	if k == "app.kubernetes.io/instance" || k == "helm.sh/chart" {
		return true
	}
	for _, p := range trackingPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// missingEntries returns the template entries, tracking and ignored keys
// excluded, that live lacks or holds with another value; nil when live is a superset.
func missingEntries(tmpl, live map[string]string, ignore map[string]bool) map[string]string {
	var out map[string]string
	for k, v := range tmpl {
		if IsTrackingKey(k) || ignore[k] {
			continue
		}
		if lv, ok := live[k]; ok && lv == v {
			continue
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[k] = v
	}
	return out
}
