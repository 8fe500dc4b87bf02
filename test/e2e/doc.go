// Package e2e runs the real claimwarden binary, as a subprocess, against the
// real control plane of test/testenv, with exactly the permissions that
// config/rbac grants its ServiceAccount: the controller's kubeconfig carries
// the admin's client certificate but impersonates
// system:serviceaccount:claimwarden-system:claimwarden, so every request it
// makes is authorized by the RBAC rules a cluster would have after
// `kubectl apply -k config/rbac`.
//
// Only the storage (test/storagesim) is simulated. The tests are in _test.go
// files; build the binary first (`make build`, or `make test` which does it).
package e2e
