// Package helm is claimwarden's Helm integration: Flux HelmReleases
// (helmrelease.go) as a source.Tool. When helm-controller's upgrade (or an
// install over an existing StatefulSet) fails on immutable
// volumeClaimTemplates, the desired StatefulSets are read from the failed
// release's record in Helm's release storage (record.go), not rendered from
// the chart: the record holds the manifest exactly as helm-controller tried
// to apply it, with values, valuesFrom, post-renderers and commonMetadata
// already applied, so no second renderer can disagree with it. Where commit
// statuses go is found from the chart's source (provenance.go); after a
// convergence helm-controller is asked to upgrade again (nudge.go), once per
// failed release however many StatefulSets it converged (source.Nudger).
package helm
