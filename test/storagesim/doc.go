// Package storagesim is the STORAGE SIMULATOR of claimwarden's test environment.
//
// It is the only simulated part of that environment: the API server, etcd,
// kube-controller-manager (PV binder, expand controller), the scheduler and
// kwok are the real programs. No real CSI driver runs there, so the roles of
// three out-of-tree components are played by this package instead:
//
//   - the CSI external-provisioner: a pending claim of a StorageClass whose
//     provisioner is Simulator.Provisioner gets a PersistentVolume pre-bound to
//     it (claimRef with UID), which the real PV binder then binds;
//     WaitForFirstConsumer claims are provisioned once the scheduler has set
//     volume.kubernetes.io/selected-node. Released volumes with reclaim policy
//     Delete are deleted.
//   - the CSI external-resizer: a bound claim whose request exceeds its
//     capacity is grown after Simulator.Delay (the simulated storage speed),
//     reporting ControllerResizeInProgress meanwhile, exactly through the same
//     status fields the real resizer writes; failures can be injected.
//     VolumeAttributesClass changes are applied the same way: modifyVolumeStatus
//     InProgress during Delay, then status.currentVolumeAttributesClassName set
//     and modifyVolumeStatus cleared; an injected failure leaves it Infeasible
//     with a ModifyVolumeError condition carrying the message.
//   - the kubelet's part of an expansion: the simulated volumes need no file
//     system resize, so a controller resize finishes the expansion; unless
//     the claim carries OfflineResizeAnnotation (offline mode): then the
//     volume grows, the claim reports allocatedResourceStatuses
//     NodeResizePending and condition FileSystemResizePending, and its
//     capacity grows only once another Pod than the one running at the
//     expansion runs with the claim (kwok runs the Pods), as drivers that
//     grow the file system only when the volume is mounted. On servers that
//     drop allocatedResources (RecoverVolumeExpansionFailure off, before
//     1.32) the condition and the volume's size say the same.
//   - the kubelet's volume statistics: MetricsHandler serves
//     kubelet_volume_stats_{capacity,used,available}_bytes and _inodes,
//     _inodes_used, _inodes_free for the claims on the simulator's volumes,
//     usage following the claim's UsedAnnotation and FillPerMinuteAnnotation
//     (a test sets how full a volume is and how fast it fills).
//
// Use it next to the real control plane, either in an existing manager
// (sim.SetupWithManager(mgr)) or on its own until ctx ends:
//
//	sim := &storagesim.Simulator{Delay: 2 * time.Second}
//	go sim.Start(ctx, cfg)
//	c.Create(ctx, storagesim.StorageClass("sim-fast", true))
//
// Failures are injected per claim with sim.FailResize, sim.FailModify and
// sim.ClearFailure, or the FailResizeAnnotation and FailModifyAnnotation; a
// failure sticks (no flapping back to in progress) until cleared, then the
// next attempt succeeds. A resize failure is also left behind when the
// request is lowered below the failed size (KEP-1790's recovery, which the
// API server allows down to just above status.capacity): that smaller
// resize succeeds, and status.allocatedResources follows it down.
//
// It is for tests and the local demo only and is never linked into the
// product binary.
package storagesim
