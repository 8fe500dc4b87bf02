// Package flux is claimwarden's Flux integration. The Kustomization watcher
// (kustomization.go) notices a revision kustomize-controller could not apply,
// fetches its artifact from source-controller (fetch.go), builds it the way
// kustomize-controller does (build.go, cached by builder.go) and proposes
// the StatefulSets whose volumeClaimTemplates changed to the rollout
// controller (reconciler/proposal); after the convergence it asks Flux to
// reconcile (reapply.go). The Notifier (events.go) optionally sends rollout
// outcomes to notification-controller.
package flux
