package helm

// BookkeepingLabels are the template label keys of Helm's own bookkeeping
// that claimwarden never copies onto claims, like GitOps tracking keys (the
// Helm-owned prefixes, meta.helm.sh/ and helm.toolkit.fluxcd.io/, are tracking
// keys for every source, see diff.IsTrackingKey). helm.sh/chart is
// "<chart>-<version>" by the chart conventions, so copying it would patch
// every claim on every chart release, a bump of the patch version included.
// app.kubernetes.io/version, the application's version, and
// app.kubernetes.io/managed-by, which does not change, are copied as any
// template label.
var BookkeepingLabels = []string{"helm.sh/chart"}
