// Package benchkit holds what the benchmark commands test/scale,
// test/spokescale and test/autoresizescale need, so that each is written
// once: the run directory with its logs and binary (workdir.go), the
// controller's /metrics scrape and sums (metrics.go), a process's memory
// (memory.go), the parts of a counting reverse proxy in front of
// kube-apiserver (proxy.go), building the controller (build.go), reading
// its cache sync from its log (starts.go), waiting while it runs
// (wait.go), a rollout's convergence (converged.go), Ready replicas and
// Bound claims (settled.go) and Ctrl-C (signal.go).
// What each command measures and how it reports it stays in the command.
package benchkit
