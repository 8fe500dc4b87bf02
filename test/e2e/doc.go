// Package e2e runs the real claimwarden binary, as a subprocess, against the
// real control plane of test/testenv, with exactly the permissions that
// config/rbac grants its ServiceAccount: the controller's kubeconfig carries
// a token the API server issued for
// system:serviceaccount:claimwarden-system:claimwarden, as in a Pod, so every
// request it makes is authenticated as a cluster would and authorized by
// the RBAC rules a cluster would have after `kubectl apply -k config/rbac`.
//
// Only the storage (test/storagesim) is simulated. The tests are in _test.go
// files; build the binary first (`make build`, or `make test` which does it).
package e2e
