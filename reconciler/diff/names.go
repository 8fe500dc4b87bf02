package diff

import (
	"strconv"
	"strings"
)

// The StatefulSet controller's naming vocabulary, read in one place: a Pod
// is <statefulset>-<ordinal> and a claim <template>-<statefulset>-<ordinal>,
// the ordinal printed by strconv (no sign, no leading zero). A PVC carries
// no owner reference to its StatefulSet, so its name is the only link.

// ClaimName is the name the StatefulSet controller gives a template's claim.
func ClaimName(template, statefulSet string, ordinal int32) string {
	return template + "-" + statefulSet + "-" + strconv.FormatInt(int64(ordinal), 10)
}

// PodName is the name the StatefulSet controller gives the Pod of an ordinal.
func PodName(statefulSet string, ordinal int32) string {
	return statefulSet + "-" + strconv.FormatInt(int64(ordinal), 10)
}

// SplitOrdinal cuts name into "<stem>-<ordinal>". ok is false for a name the
// StatefulSet controller would not give: no stem, or an ordinal that is not
// as strconv prints a non-negative int32 (a sign, leading zeros, too large).
func SplitOrdinal(name string) (stem string, ordinal int32, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	ord := name[i+1:]
	n, err := strconv.ParseInt(ord, 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != ord {
		return "", 0, false
	}
	return name[:i], int32(n), true
}

// TemplateOf is the template part of claim, a claim of StatefulSet sts;
// ok is false for a name that is not <template>-<sts>-<ordinal> with a
// non-empty template. A template may contain dashes: the StatefulSet's
// name, known, is what separates it from the template.
func TemplateOf(claim, sts string) (template string, ok bool) {
	stem, _, ok := SplitOrdinal(claim)
	if !ok {
		return "", false
	}
	t, ok := strings.CutSuffix(stem, "-"+sts)
	if !ok || t == "" {
		return "", false
	}
	return t, true
}

// PodOrdinal is the ordinal of pod, a Pod of StatefulSet sts; ok is false
// for a name that is not <sts>-<ordinal>.
func PodOrdinal(sts, pod string) (ordinal int32, ok bool) {
	stem, ordinal, ok := SplitOrdinal(pod)
	if !ok || stem != sts {
		return 0, false
	}
	return ordinal, true
}
