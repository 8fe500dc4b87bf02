// Package testenv starts a real, local Kubernetes control plane for integration
// tests and for the demo: etcd and kube-apiserver, optionally kube-controller-manager
// and kube-scheduler (so StatefulSets, the PV binder and the garbage collector really
// run), and optionally kwok with one fake Node (so Pods become Running and Ready
// without a kubelet).
//
// The binaries come from `make testenv` (see BinDir). Everything listens on
// 127.0.0.1 on free ports, and every component logs to <Dir>/<component>.log.
//
// Typical use in a test package:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.RunTests(m, testenv.Options{Kwok: true}, &env))
//	}
//
// or, for a test that needs a cluster of its own, env := testenv.StartT(t, opts).
//
// Why not controller-runtime's envtest control plane: it would do (admin users via
// AddUser, RBAC, a service-account key in its CertDir), but it starts etcd and the API
// server without a parent-death signal, so a test binary killed by `go test -timeout`
// or ^C leaves both running. Starting the two processes directly takes a few flags
// (controlplane.go) and lets one process manager (Process, process.go) run all six
// components the same way; test/controllerproc runs the claimwarden binary with it
// too. envtest is still used to install CRDs.
//
// RepoRoot, FreePorts and TailFile are exported for the test tools as well.
package testenv
