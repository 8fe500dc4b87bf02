package main

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/prometheus/procfs"
)

// cpuReport is where the machine's CPU went during a window (the bump, the
// manual procedure): per component of the run, in CPU seconds, and the
// machine's busy share. On a machine this small every component shares the
// same cores, so a MISSED time target is explained by who used them.
type cpuReport struct {
	Seconds float64 `json:"seconds"`
	Cores   int     `json:"cores"`
	// Busy is the machine's CPU seconds not idle (nor waiting for I/O) in
	// the window, over Seconds × Cores.
	Busy float64 `json:"busy"`
	// ByComponent is CPU seconds per process: the control plane's
	// components by name, "claimwarden", and "scale run + storage
	// simulator" (this process, which plays the storage and the user).
	ByComponent map[string]float64 `json:"byComponent"`
}

// cpuSample is a moment's CPU counters of the machine and the run's processes.
type cpuSample struct {
	machine procfs.CPUStat
	procs   map[string]float64
}

// selfComponent names this process among the components.
const selfComponent = "scale run + storage simulator"

// sampleCPU reads the counters now. A process that cannot be read (it
// restarted, or this is not Linux) is left out of the sample.
func (r *runner) sampleCPU() (cpuSample, error) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return cpuSample{}, err
	}
	st, err := fs.Stat()
	if err != nil {
		return cpuSample{}, err
	}
	s := cpuSample{machine: st.CPUTotal, procs: map[string]float64{}}
	pids := map[string]int{"claimwarden": r.ctrl.Pid(), selfComponent: os.Getpid()}
	for _, p := range r.env.Processes() {
		pids[p.Name()] = p.Pid()
	}
	for name, pid := range pids {
		p, err := fs.Proc(pid)
		if err != nil {
			continue
		}
		if ps, err := p.Stat(); err == nil {
			s.procs[name] = ps.CPUTime()
		}
	}
	return s, nil
}

// cpuBetween is the report of the window from a to b, seconds long.
func cpuBetween(a, b cpuSample, seconds float64) cpuReport {
	rep := cpuReport{Seconds: seconds, Cores: runtime.NumCPU(), ByComponent: map[string]float64{}}
	idle := func(c procfs.CPUStat) float64 { return c.Idle + c.Iowait }
	total := func(c procfs.CPUStat) float64 {
		return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	}
	if t := total(b.machine) - total(a.machine); t > 0 {
		rep.Busy = 1 - (idle(b.machine)-idle(a.machine))/t
	}
	for name, end := range b.procs {
		if start, ok := a.procs[name]; ok && end >= start {
			rep.ByComponent[name] = end - start
		}
	}
	return rep
}

// String is the report for people: the machine's busy share, then the
// components from the busiest down, each in CPU seconds and cores.
func (c cpuReport) String() string {
	if c.Seconds == 0 {
		return "not measured"
	}
	names := slices.SortedFunc(maps.Keys(c.ByComponent), func(a, b string) int {
		return cmp.Compare(c.ByComponent[b], c.ByComponent[a])
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.2f cores)", n, c.ByComponent[n], c.ByComponent[n]/c.Seconds))
	}
	return fmt.Sprintf("machine %.0f%% busy of %d cores over %.0fs; %s", 100*c.Busy, c.Cores, c.Seconds, strings.Join(parts, ", "))
}

// apiComponents serve every request of the run.
var apiComponents = []string{"kube-apiserver", "etcd"}

// cores is the cores the named components used on average in the window.
func (c cpuReport) cores(names ...string) float64 {
	if c.Seconds == 0 {
		return 0
	}
	var sum float64
	for _, n := range names {
		sum += c.ByComponent[n]
	}
	return sum / c.Seconds
}
