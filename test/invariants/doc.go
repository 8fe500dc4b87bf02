// Package invariants records what happens to the objects a rollout must never
// lose or damage, on a real control plane, and says at the end of a run
// whether anything did. A test starts a Recorder before its run (the objects
// it finds then are the baseline), tells it the Pods it restarts on purpose
// and the commit statuses it read back, and calls Check at the end.
//
// The rules (each a Violation kind):
//   - a PVC's storage request is lowered, other than a documented recovery
//     from a failed expansion (the claim carries claimwarden.dev/recovered-from
//     naming the request it was lowered from);
//   - a PVC is deleted;
//   - a Pod of a StatefulSet is deleted, re-created or has a container
//     restarted without the test having registered that restart;
//   - a ControllerRevision is deleted (the runs here never change a Pod
//     template often enough for the StatefulSet controller to prune history);
//   - a StatefulSet seen during the run is absent at the end;
//   - claimwarden (field manager v1alpha1.ControllerName) writes a claim's
//     spec to a value it had already written: more than one patch for one
//     claim change. Counted from the server's own record (resourceVersion and
//     managedFields changes), so a patch the server found to change nothing,
//     and which therefore changed nothing, is not seen;
//   - a commit status context without exactly one final status.
//
// The watches are informers: they survive kube-apiserver and etcd restarts
// (after a relist a deletion shows as a final-state-unknown delete, still
// recorded), which is what the chaos run needs.
package invariants
