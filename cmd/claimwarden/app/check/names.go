package check

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/claimwarden/claimwarden/integrations/manifests"
)

// nameErrors refuse a StatefulSet whose names the API server would refuse:
// such a proposal cannot be applied, and its names end up in comments and
// terminals, where a backtick, a "|" or a line break could forge a verdict.
// Names are quoted in the message, so that it shows what was written.
func nameErrors(s manifests.StatefulSet) []error {
	var errs []error
	bad := func(field, value string, problems []string) {
		errs = append(errs, fmt.Errorf("StatefulSet %s (%s): %s %s: %s",
			strconv.Quote(s.Namespace+"/"+s.Name), s.Location, field, strconv.Quote(value), strings.Join(problems, "; ")))
	}
	if p := validation.IsDNS1123Label(s.Namespace); len(p) > 0 {
		bad("metadata.namespace", s.Namespace, p)
	}
	if p := validation.IsDNS1123Subdomain(s.Name); len(p) > 0 {
		bad("metadata.name", s.Name, p)
	}
	for i, t := range s.Spec.VolumeClaimTemplates {
		if p := validation.IsDNS1123Subdomain(t.Name); len(p) > 0 {
			bad(fmt.Sprintf("spec.volumeClaimTemplates[%d].metadata.name", i), t.Name, p)
		}
	}
	return errs
}
