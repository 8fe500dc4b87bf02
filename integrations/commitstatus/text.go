package commitstatus

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// statusKey derives a Bitbucket build key of at most limit bytes from a
// status context. Bitbucket identifies a build status on a commit by its
// key, so the key must be the same for the same context every time (a new
// key would add a second build instead of updating the first) and differ
// between contexts. A context that fits is used as is; a longer one becomes
// its first bytes, "-", and the first 10 hex digits of its SHA-256, e.g.
//
//	claimwarden/production/postgres-primary-0 (41 bytes, limit 40)
//	→ claimwarden/production/postgr-d9b70c5971
//
// The prefix keeps keys recognisable; the hash (40 bits) keeps contexts
// sharing a long prefix apart. The cut never splits a UTF-8 sequence. The
// full context still goes in the status's name, which users read.
func statusKey(context string, limit int) string {
	if len(context) <= limit {
		return context
	}
	sum := sha256.Sum256([]byte(context))
	suffix := "-" + hex.EncodeToString(sum[:])[:10]
	cut := limit - len(suffix)
	for cut > 0 && !utf8.RuneStart(context[cut]) {
		cut--
	}
	return context[:cut] + suffix
}

// StatusContext is the context (the name) of a StatefulSet's commit status:
// <prefix>/<namespace>/<statefulset>. The controller and `claimwarden check`
// both name their statuses with it, so that the pull request's check and the
// rollout after the merge report under one name.
func StatusContext(prefix, namespace, statefulSet string) string {
	return prefix + "/" + namespace + "/" + statefulSet
}

// ClusterPrefix is the context prefix of the statuses of one cluster's
// StatefulSets: prefix in claimwarden's own (cluster ""), prefix/<cluster>
// in a spoke, so that one commit's StatefulSets of the same name in two
// clusters are two statuses.
func ClusterPrefix(prefix, cluster string) string {
	if cluster == "" {
		return prefix
	}
	return prefix + "/" + cluster
}
