package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

// requestCounting explains, in the report, how requests were attributed.
const requestCounting = "Requests are counted at a TLS reverse proxy between the controller and " +
	"kube-apiserver: the controller's kubeconfig points at it and nothing else uses it, so it sees exactly " +
	"the controller's requests and attributes each by URL to verb and resource/subresource. " +
	"kube-apiserver's apiserver_request_total has no client label, and kube-controller-manager and the " +
	"storage simulator write the same resources, so it cannot tell the controller's writes apart; the " +
	"controller's own rest_client_requests_total has no resource label. The proxy's totals per HTTP method " +
	"are cross-checked against rest_client_requests_total for every window."

// Report is the result of a run; it is printed and optionally written as JSON.
type Report struct {
	Flags           []string `json:"flags"`
	WallSeconds     float64  `json:"wallSeconds"`
	StatefulSets    int      `json:"statefulSets"`
	Replicas        int      `json:"replicas"`
	Namespaces      int      `json:"namespaces"`
	PVCs            int      `json:"pvcs"`
	DelaySeconds    float64  `json:"delaySeconds"`
	RequestCounting string   `json:"requestCounting"`
	// Controller is `claimwarden version`; ControllerSource the commit and
	// uncommitted changes it was built from.
	Controller       string `json:"controller"`
	ControllerSource string `json:"controllerSource"`
	// Crowd is the big cluster's objects around the StatefulSets (-crowd).
	Crowd   crowdCounts  `json:"crowd"`
	Setup   setupReport  `json:"setup"`
	Rest    restReport   `json:"rest"`
	Bump    bumpReport   `json:"bump"`
	Memory  memoryReport `json:"memory"`
	Manual  manualReport `json:"manual"`
	Targets []target     `json:"targets"`
}

type setupReport struct {
	ControlPlaneSeconds float64 `json:"controlPlaneSeconds"`
	// CrowdSeconds is how long creating the crowd took.
	CrowdSeconds float64 `json:"crowdSeconds,omitempty"`
	// CacheSyncSeconds is from the controller's start until every one of
	// its controllers had synced its caches.
	CacheSyncSeconds float64 `json:"cacheSyncSeconds"`
	// CreateSeconds is how long creating the StatefulSets took.
	CreateSeconds float64 `json:"createSeconds"`
	// PodsAndClaimsSeconds is from the first create until every Pod is
	// Ready and every PVC Bound (polled every 2 s): the cluster's part.
	PodsAndClaimsSeconds float64 `json:"podsAndClaimsSeconds"`
	// ReadySeconds is from the first create until every Pod is Ready, every
	// PVC Bound and every VolumeClaimRollout Ready.
	ReadySeconds float64 `json:"readySeconds"`
}

type restReport struct {
	// Idle is a window with nothing happening, from a quiet controller on.
	Idle window `json:"idle"`
	// NoOp is one reconcile of every StatefulSet with nothing to change.
	NoOp              window `json:"noOp"`
	StatefulSetsPoked int    `json:"statefulSetsPoked"`
	// IdleChanges and NoOpChanges are the changes to StatefulSets, PVCs and
	// VolumeClaimRollouts seen by a watch during each window, by kind, event
	// and field manager (the poke itself shows as the scale run's own).
	IdleChanges map[string]string `json:"idleChanges"`
	NoOpChanges map[string]string `json:"noOpChanges"`
	// IdleWrites and NoOpWrites are the first writes the controller sent in
	// each window (there should be none), with their bodies.
	IdleWrites []capturedWrite `json:"idleWrites"`
	NoOpWrites []capturedWrite `json:"noOpWrites"`
}

type bumpReport struct {
	// Times are from the first bump (orphan delete) on.
	LastRecreateSeconds float64 `json:"lastRecreateSeconds"`
	AllReadySeconds     float64 `json:"allReadySeconds"`
	// LowerBoundSeconds is the last re-create plus replicas × delay: the
	// last StatefulSet's claims cannot be resized faster, one at a time.
	LowerBoundSeconds float64 `json:"lowerBoundSeconds"`
	// PerStatefulSet is each StatefulSet's time from its re-create to its
	// rollout Ready at the new size (observed by polling every 500 ms).
	PerStatefulSet           summary `json:"perStatefulSetSeconds"`
	PerStatefulSetLowerBound float64 `json:"perStatefulSetLowerBoundSeconds"`
	// OverheadPerStepP90 is (PerStatefulSet.P90 − lower bound) / replicas:
	// what the controller, the API server and the simulator's reaction add
	// to each resize.
	OverheadPerStepP90 float64 `json:"overheadPerStepP90Seconds"`
	// Steps splits the bump into resize steps from a watch of the PVCs.
	Steps stepReport `json:"steps"`
	// OverheadSeconds is AllReadySeconds minus LowerBoundSeconds.
	OverheadSeconds float64 `json:"overheadSeconds"`
	// CPUSecondsPerPVC is the controller's CPU time in Requests' window over
	// PVCsChanged.
	CPUSecondsPerPVC float64 `json:"cpuSecondsPerPVC"`
	// PodsRestarted counts Pods gone or re-created during the bump.
	PodsRestarted int `json:"podsRestarted"`
	// CPU is where the machine's CPU went from the first bump until every
	// rollout was Ready.
	CPU cpuReport `json:"cpu"`
	// Storage is what the storage simulator did in the same window.
	Storage storageReport `json:"storage"`
	// PeakQueueDepth is the largest workqueue depth sampled (every
	// queueDepthInterval) until every rollout was Ready: StatefulSets
	// waiting for the controller.
	PeakQueueDepth float64 `json:"peakQueueDepth"`

	PVCs           int `json:"pvcs"`
	PVCsChanged    int `json:"pvcsChanged"`
	PVCsAtCapacity int `json:"pvcsAtCapacity"`

	// Requests is what the controller did from just before the first bump
	// until it was quiet after the last rollout was Ready.
	Requests window `json:"requests"`
	// PerPVC is Requests.ByMethod divided by PVCsChanged.
	PerPVC map[string]float64 `json:"perPVCByMethod"`
	// ClaimPatches are PATCHes of persistentvolumeclaims.
	ClaimPatches int64 `json:"claimPatches"`
	// StepCount is the bump's resize steps: each StatefulSet's claims are
	// patched -max-concurrent-patches at a time.
	StepCount int `json:"stepCount"`
	// StatusWrites are writes to volumeclaimrollouts/status.
	StatusWrites        int64   `json:"statusWrites"`
	StatusWritesPerStep float64 `json:"statusWritesPerStep"`
	// Floor is the fewest requests of each verb and resource the bump
	// needs (see floorOf); FloorWrites their sum.
	Floor       map[string]int64 `json:"floor"`
	FloorWrites int64            `json:"floorWrites"`
	// RolloutWrites are writes to volumeclaimrollouts themselves (metadata).
	RolloutWrites int64 `json:"rolloutWrites"`
	// EventWrites are event creations and updates (both events APIs).
	EventWrites int64 `json:"eventWrites"`
	// OtherWrites are writes to anything else.
	OtherWrites map[string]int64 `json:"otherWrites"`
}

type memoryReport struct {
	ControllerPID int `json:"controllerPID"`
	// PeakRSSMiB is VmHWM at the end of the run: the kernel's peak RSS.
	PeakRSSMiB        float64 `json:"peakRSSMiB"`
	SampledPeakRSSMiB float64 `json:"sampledPeakRSSMiB"`
	AfterSetupRSSMiB  float64 `json:"afterSetupRSSMiB"`
	AfterBumpRSSMiB   float64 `json:"afterBumpRSSMiB"`
	EndRSSMiB         float64 `json:"endRSSMiB"`
	// HeapInuseMiB is go_memstats_heap_inuse_bytes after the bump.
	HeapInuseMiB float64 `json:"heapInuseMiB"`
	Note         string  `json:"note,omitempty"`
}

type target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
}

// Targets the run is judged by (issue 17's figures).
const (
	// peakRSSSmallMiB holds up to smallTierPVCs claims, peakRSSLargeMiB above.
	peakRSSSmallMiB = 150
	peakRSSLargeMiB = 400
	smallTierPVCs   = 600
	// In a big cluster's crowd (issue 31): the controller's peak RSS, and
	// its caches synced this soon after it starts.
	peakRSSCrowdMiB     = 256
	maxCacheSyncSeconds = 30.0
	// maxStepOverheadP90 is the p90 time a resize step takes beyond the
	// simulated delay (controller reaction plus storage reaction).
	maxStepOverheadP90 = 1.0
	// maxOverheadSeconds bounds the whole bump beyond its lower bound.
	maxOverheadSeconds = 30
	// maxManualRatio: claimwarden no slower than the manual procedure.
	maxManualRatio = 1.0
	// maxOverFloor: the bump's writes within 10% of their floor.
	maxOverFloor = 1.1
)

// The requests of the floor (floorOf), by verb and resource as the proxy
// names them.
const (
	floorClaimPatch = "PATCH persistentvolumeclaims"
	floorStatus     = "PATCH volumeclaimrollouts.claimwarden.dev/status"
	floorEvent      = "CREATE events.events.k8s.io"
	floorOwner      = "PATCH volumeclaimrollouts.claimwarden.dev"
	floorJournal    = "GET volumeclaimrollouts.claimwarden.dev"
)

// floorOf is the fewest requests the bump of statefulSets, pvcs claims in
// steps resize steps needs from the controller (issue 31): one patch per
// claim; one status write and one event per step, and one of each when a
// rollout completes; one owner reference per rollout (the run's orphan
// delete strips it, the re-created StatefulSet has a new UID); no rollout
// read uncached. The run itself deletes and re-creates the StatefulSets.
func floorOf(statefulSets, pvcs, steps int) map[string]int64 {
	return map[string]int64{
		floorClaimPatch: int64(pvcs),
		floorStatus:     int64(steps + statefulSets),
		floorEvent:      int64(steps + statefulSets),
		floorOwner:      int64(statefulSets),
		floorJournal:    0,
	}
}

func newReport(o options) *Report {
	return &Report{
		StatefulSets:    o.statefulSets,
		Replicas:        o.replicas,
		Namespaces:      o.namespaces,
		PVCs:            o.statefulSets * o.replicas,
		DelaySeconds:    o.delay.Seconds(),
		RequestCounting: requestCounting,
	}
}

// evaluate derives the per-PVC figures and judges the targets.
func (rep *Report) evaluate(o options) {
	b := &rep.Bump
	pvcs := float64(b.PVCsChanged)
	b.PerPVC = map[string]float64{}
	for m, v := range b.Requests.ByMethod {
		b.PerPVC[m] = v / pvcs
	}
	b.OtherWrites = map[string]int64{}
	for k, n := range b.Requests.ByVerbResource {
		verb, res, _ := strings.Cut(k, " ")
		if !isWriteVerb(verb) {
			continue
		}
		switch {
		case res == "persistentvolumeclaims" && verb == "PATCH":
			b.ClaimPatches += n
		case res == "volumeclaimrollouts.claimwarden.dev/status":
			b.StatusWrites += n
		case res == "volumeclaimrollouts.claimwarden.dev":
			b.RolloutWrites += n
		case res == "events" || res == "events.events.k8s.io":
			b.EventWrites += n
		default:
			b.OtherWrites[k] += n
		}
	}
	b.StepCount = o.statefulSets * ((o.replicas + o.maxConcurrentPatches - 1) / o.maxConcurrentPatches)
	b.StatusWritesPerStep = float64(b.StatusWrites) / float64(max(b.StepCount, 1))
	b.Floor = floorOf(o.statefulSets, b.PVCsChanged, b.StepCount)
	b.FloorWrites = 0
	for _, n := range b.Floor {
		b.FloorWrites += n
	}
	b.OverheadPerStepP90 = (b.PerStatefulSet.P90 - b.PerStatefulSetLowerBound) / float64(o.replicas)
	b.OverheadSeconds = b.AllReadySeconds - b.LowerBoundSeconds
	b.CPUSecondsPerPVC = b.Requests.CPUSeconds / pvcs
	rep.Manual.judge(b)

	restWrites := rep.Rest.Idle.Writes + rep.Rest.NoOp.Writes
	statusFloor := b.Floor[floorStatus]
	rep.Targets = []target{
		{Name: "writes at rest (idle window + no-op reconciles)", Want: "0",
			Got: fmt.Sprint(restWrites), Met: restWrites == 0},
		{Name: "PVC patches per PVC changed", Want: "1",
			Got: fmt.Sprintf("%.2f (%d/%d)", float64(b.ClaimPatches)/pvcs, b.ClaimPatches, b.PVCsChanged),
			Met: b.ClaimPatches == int64(b.PVCsChanged)},
		{Name: "VolumeClaimRollout status writes", Want: fmt.Sprintf("≤ %d (one per step + one per rollout)", statusFloor),
			Got: fmt.Sprintf("%d (%.2f/step)", b.StatusWrites, b.StatusWritesPerStep),
			Met: b.StatusWrites <= statusFloor},
		{Name: "writes per PVC changed, against the floor", Want: fmt.Sprintf("≤ %.2f (the floor %.2f + %.0f%%)", maxOverFloor*float64(b.FloorWrites)/pvcs, float64(b.FloorWrites)/pvcs, 100*(maxOverFloor-1)),
			Got: fmt.Sprintf("%.2f (%d/%d)", float64(b.Requests.Writes)/pvcs, b.Requests.Writes, b.PVCsChanged),
			Met: float64(b.Requests.Writes) <= maxOverFloor*float64(b.FloorWrites)},
		{Name: "Pods restarted by the bump", Want: "0", Got: fmt.Sprint(b.PodsRestarted), Met: b.PodsRestarted == 0},
		{Name: "overhead per resize step, p90 (controller + storage reaction)", Want: fmt.Sprintf("≤ %.1fs", maxStepOverheadP90),
			Got: fmt.Sprintf("%.2fs", b.Steps.Overhead.P90), Met: b.Steps.Steps > 0 && b.Steps.Overhead.P90 <= maxStepOverheadP90},
		{Name: "bump overhead (all Ready − lower bound)", Want: fmt.Sprintf("≤ %ds", maxOverheadSeconds),
			Got: fmt.Sprintf("%.1fs", b.OverheadSeconds), Met: b.OverheadSeconds <= maxOverheadSeconds},
	}
	if rep.Crowd.Pods > 0 {
		rep.Targets = append(rep.Targets, target{
			Name: "caches synced after the start, in the crowd", Want: fmt.Sprintf("< %.0fs", maxCacheSyncSeconds),
			Got: fmt.Sprintf("%.1fs", rep.Setup.CacheSyncSeconds), Met: rep.Setup.CacheSyncSeconds < maxCacheSyncSeconds,
		})
	}
	if rep.Memory.Note == "" {
		limit := peakRSSSmallMiB
		switch {
		case rep.Crowd.Pods > 0:
			limit = peakRSSCrowdMiB
		case rep.PVCs > smallTierPVCs:
			limit = peakRSSLargeMiB
		}
		rep.Targets = append(rep.Targets, target{
			Name: "controller peak RSS (VmHWM)", Want: fmt.Sprintf("< %d MiB", limit),
			Got: fmt.Sprintf("%.1f MiB", rep.Memory.PeakRSSMiB), Met: rep.Memory.PeakRSSMiB < float64(limit),
		})
	}
	if rep.Manual.Seconds > 0 {
		rep.Targets = append(rep.Targets, target{
			Name: "time against the manual procedure (claimwarden / manual)", Want: fmt.Sprintf("≤ %.1f", maxManualRatio),
			Got: fmt.Sprintf("%.2f (%.1fs / %.1fs)", rep.Manual.TimeRatio, b.AllReadySeconds, rep.Manual.Seconds),
			Met: rep.Manual.TimeRatio <= maxManualRatio,
		})
	}
}

func isWriteVerb(v string) bool {
	switch v {
	case "CREATE", "UPDATE", "PATCH", "DELETE", "DELETECOLLECTION":
		return true
	}
	return false
}

func (rep *Report) writeJSON(path string) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// print writes the human-readable report; sections of a failed run that
// never ran are left out.
func (rep *Report) print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("")
	p("==== claimwarden scale report ====")
	p("%d StatefulSets × %d replicas = %d PVCs in %d namespaces; simulated resize delay %gs", rep.StatefulSets, rep.Replicas, rep.PVCs, rep.Namespaces, rep.DelaySeconds)
	p("flags: %s   wall time: %.1fs", strings.Join(rep.Flags, " "), rep.WallSeconds)
	p("real etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok (Pods); storage simulated in-process; controller = claimwarden binary, pid %d", rep.Memory.ControllerPID)
	p("controller: %s", rep.Controller)
	p("source: %s", rep.ControllerSource)

	s := rep.Setup
	p("")
	p("SETUP")
	p("  control plane started in          %7.1fs", s.ControlPlaneSeconds)
	if rep.Crowd.Pods > 0 {
		p("  crowd of %s created in %.1fs", rep.Crowd, s.CrowdSeconds)
	}
	p("  controller's caches synced         %7.1fs after its start", s.CacheSyncSeconds)
	p("  %d StatefulSets created in        %7.1fs", rep.StatefulSets, s.CreateSeconds)
	if s.ReadySeconds == 0 {
		return
	}
	p("  all Pods Ready and PVCs Bound      %7.1fs after the first create", s.PodsAndClaimsSeconds)
	p("  ... and all rollouts Ready         %7.1fs after the first create", s.ReadySeconds)

	p("")
	p("AT REST")
	if rep.Rest.StatefulSetsPoked == 0 {
		return
	}
	p("  idle: %.1fs from the moment the controller was quiet (no reconcile, no request over -settle)", rep.Rest.Idle.Seconds)
	printWindow(w, rep.Rest.Idle, 0, nil)
	printChanges(w, rep.Rest.IdleChanges, rep.Rest.IdleWrites)
	p("  no-op reconciles: an unused annotation set on all %d StatefulSets, until the controller was quiet again (%.1fs)", rep.Rest.StatefulSetsPoked, rep.Rest.NoOp.Seconds)
	printWindow(w, rep.Rest.NoOp, 0, nil)
	printChanges(w, rep.Rest.NoOpChanges, rep.Rest.NoOpWrites)

	b := rep.Bump
	p("")
	p("TEMPLATE BUMP %s → %s (orphan delete + re-create of every StatefulSet)", fromSize, toSize)
	if b.AllReadySeconds == 0 {
		return
	}
	p("  last re-create finished           %7.1fs after the first bump", b.LastRecreateSeconds)
	p("  all rollouts Ready at %s          %7.1fs after the first bump", toSize, b.AllReadySeconds)
	p("  lower bound (last re-create + %.0f × %gs) %5.1fs  → total %.2f× the bound", b.PerStatefulSetLowerBound/rep.DelaySeconds, rep.DelaySeconds, b.LowerBoundSeconds, b.AllReadySeconds/b.LowerBoundSeconds)
	ps := b.PerStatefulSet
	p("  per StatefulSet, re-create → Ready: min %.1fs  p50 %.1fs  p90 %.1fs  max %.1fs  (bound %.1fs)",
		ps.Min, ps.P50, ps.P90, ps.Max, b.PerStatefulSetLowerBound)
	p("  overhead per resize step (p90 of the per-StatefulSet time): %.2fs; peak workqueue depth %.0f", b.OverheadPerStepP90, b.PeakQueueDepth)
	st := b.Steps
	p("  resize steps seen by a PVC watch (%d steps, concurrency %s):", st.Steps, flagValue(rep.Flags, "max-concurrent-patches"))
	p("    overhead per step beyond the delay  p50 %.2fs  p90 %.2fs  max %.2fs", st.Overhead.P50, st.Overhead.P90, st.Overhead.Max)
	p("    controller: slot free → patch seen  p50 %.2fs  p90 %.2fs  max %.2fs", st.Controller.P50, st.Controller.P90, st.Controller.Max)
	p("    storage: patch → capacity − delay   p50 %.2fs  p90 %.2fs  max %.2fs", st.Storage.P50, st.Storage.P90, st.Storage.Max)
	p("    last capacity → rollout seen Ready  p50 %.2fs  p90 %.2fs  max %.2fs", st.Completion.P50, st.Completion.P90, st.Completion.Max)
	if st.Incomplete != "" {
		p("    INCOMPLETE: %s", st.Incomplete)
	}
	p("  controller CPU %.1fs in the bump window: %.1f ms per PVC changed; Pods restarted: %d", b.Requests.CPUSeconds, b.CPUSecondsPerPVC*1000, b.PodsRestarted)
	p("  PVCs checked after: %d, requesting %s: %d, capacity %s: %d", b.PVCs, toSize, b.PVCsChanged, toSize, b.PVCsAtCapacity)
	p("  CPU: %s", b.CPU)
	p("  storage simulator: %s", b.Storage)

	p("")
	p("CONTROLLER API REQUESTS DURING THE BUMP (first bump → controller quiet again, %.1fs), %d PVCs changed", b.Requests.Seconds, b.PVCsChanged)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  by HTTP method (rest_client_requests_total)\trequests\tper PVC\t")
	for _, m := range sortedKeys(b.Requests.ByMethod) {
		fmt.Fprintf(tw, "  %s\t%.0f\t%.2f\t\n", m, b.Requests.ByMethod[m], b.PerPVC[m])
	}
	tw.Flush()
	printWindow(w, b.Requests, b.PVCsChanged, b.Floor)
	p("  writes: PVC PATCH %d (%.2f/PVC), rollout status %d (%.2f/step, %d steps), rollout metadata %d, events %d, other %v; floor %d (%.2f/PVC)",
		b.ClaimPatches, float64(b.ClaimPatches)/float64(b.PVCsChanged), b.StatusWrites, b.StatusWritesPerStep, b.StepCount,
		b.RolloutWrites, b.EventWrites, b.OtherWrites, b.FloorWrites, float64(b.FloorWrites)/float64(max(b.PVCsChanged, 1)))
	p("  claimwarden_claim_patches_total: %v", b.Requests.ClaimPatches)

	m := rep.Memory
	p("")
	p("CONTROLLER MEMORY (pid %d)", m.ControllerPID)
	if m.Note != "" {
		p("  %s", m.Note)
	} else {
		p("  peak RSS (VmHWM) %.1f MiB; VmRSS after setup %.1f, after bump %.1f, at end %.1f, largest 1 s sample %.1f MiB; Go heap in use %.1f MiB",
			m.PeakRSSMiB, m.AfterSetupRSSMiB, m.AfterBumpRSSMiB, m.EndRSSMiB, m.SampledPeakRSSMiB, m.HeapInuseMiB)
	}

	if mn := rep.Manual; mn.Seconds > 0 {
		p("")
		p("MANUAL PROCEDURE %s → %s, same control plane, controller stopped (patch each PVC, orphan delete, wait, re-create; %s workers)", toSize, manualSize, flagValue(rep.Flags, "workers"))
		p("  every PVC at %s and every StatefulSet Ready %7.1fs after the first request; Pods restarted: %d", manualSize, mn.Seconds, mn.PodsRestarted)
		p("  script requests %d: %v", mn.RequestsTotal, mn.Requests)
		p("  CPU: %s", mn.CPU)
		p("  storage simulator: %s", mn.Storage)
		p("  claimwarden / manual: time %.2f, requests %.2f (controller's plus the same re-apply, over the script's)", mn.TimeRatio, mn.RequestRatio)
	}

	p("")
	p("HOW REQUESTS WERE COUNTED")
	p("  %s", rep.RequestCounting)

	p("")
	p("TARGETS")
	for _, t := range rep.Targets {
		mark := "ok    "
		if !t.Met {
			mark = "MISSED"
		}
		p("  [%s] %s: %s (want %s)", mark, t.Name, t.Got, t.Want)
	}
}

// printChanges prints what changed in the cluster during a rest window and
// the controller's writes in it.
func printChanges(w io.Writer, changes map[string]string, writes []capturedWrite) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "    cluster changes seen (StatefulSets, PVCs, VolumeClaimRollouts): none")
	} else {
		fmt.Fprintln(w, "    cluster changes seen (StatefulSets, PVCs, VolumeClaimRollouts):")
		for _, k := range sortedKeys(changes) {
			fmt.Fprintf(w, "      %s: %s\n", k, changes[k])
		}
	}
	for _, c := range writes {
		fmt.Fprintf(w, "    controller write at %s: %s\n      %s\n", c.At.Format("15:04:05.000"), c.Request, c.Body)
	}
}

// printWindow prints a window's reconciles and its requests by verb and
// resource, largest first, per PVC when pvcs > 0.
// printWindow prints a window's requests; floor, when given, the fewest of
// each verb and resource (a dash where it has none).
func printWindow(w io.Writer, win window, pvcs int, floor map[string]int64) {
	throttle := "not exported by the controller"
	if win.ThrottledSeconds != nil {
		throttle = fmt.Sprintf("%.1fs in all", *win.ThrottledSeconds)
	}
	fmt.Fprintf(w, "    reconciles %.0f %v, errors %.0f; %.0f worker(s) busy %.0f%% of the window; mean queue wait %.3fs, mean reconcile %.3fs\n",
		win.ReconcilesTotal, win.Reconciles, win.ReconcileErrors, win.Workers, win.WorkerBusy*100, win.AvgQueueSeconds, win.AvgReconcileSeconds)
	fmt.Fprintf(w, "    client-side throttling (rest_client_rate_limiter_duration_seconds): %s\n", throttle)
	fmt.Fprintf(w, "    requests by verb and resource (proxy; cross-check with rest_client_requests_total: %s), writes %d:\n", win.CrossCheck, win.Writes)
	if len(win.ByVerbResource) == 0 {
		fmt.Fprintln(w, "      none")
		return
	}
	keys := sortedKeys(win.ByVerbResource)
	sort.SliceStable(keys, func(i, j int) bool { return win.ByVerbResource[keys[i]] > win.ByVerbResource[keys[j]] })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "      verb\tresource\trequests\tper PVC\tfloor\tmean API latency\t")
	for _, k := range keys {
		verb, res, _ := strings.Cut(k, " ")
		per := "-"
		if pvcs > 0 {
			per = fmt.Sprintf("%.2f", float64(win.ByVerbResource[k])/float64(pvcs))
		}
		lat := "-"
		if ms, ok := win.MeanLatencyMs[k]; ok {
			lat = fmt.Sprintf("%.1f ms", ms)
		}
		least := "-"
		if n, ok := floor[k]; ok {
			least = fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "      %s\t%s\t%d\t%s\t%s\t%s\t\n", verb, res, win.ByVerbResource[k], per, least, lat)
	}
	tw.Flush()
	if len(win.Failed) > 0 {
		fmt.Fprintf(w, "    non-2xx responses: %v\n", win.Failed)
	}
	if len(win.PatchShapes) > 0 {
		fmt.Fprintln(w, "    PATCHes by the fields they write:")
		for _, k := range sortedKeys(win.PatchShapes) {
			fmt.Fprintf(w, "      %6d  %s\n", win.PatchShapes[k], k)
		}
	}
	if len(win.PeakRate10s) > 0 {
		var rates []string
		for _, g := range sortedKeys(win.PeakRate10s) {
			rates = append(rates, fmt.Sprintf("%s %.1f/s", g, win.PeakRate10s[g]))
		}
		fmt.Fprintf(w, "    peak request rate over 10 s, per resource type (one client and token bucket each): %s\n", strings.Join(rates, ", "))
	}
}

// flagValue is the value of -name in flags as recorded in the report.
func flagValue(flags []string, name string) string {
	for _, f := range flags {
		if v, ok := strings.CutPrefix(f, "-"+name+"="); ok {
			return v
		}
	}
	return "?"
}
