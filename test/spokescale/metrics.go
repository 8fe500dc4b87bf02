package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// families are Prometheus metric families by name.
type families map[string]*dto.MetricFamily

// parseMetrics reads Prometheus' text format.
func parseMetrics(r io.Reader) (families, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(r)
}

// sum adds the values (gauge, counter or untyped) of name's series whose
// labels include every pair of match.
func (f families) sum(name string, match map[string]string) (float64, bool) {
	fam, ok := f[name]
	if !ok {
		return 0, false
	}
	var total float64
series:
	for _, m := range fam.GetMetric() {
		for k, v := range match {
			if labelValue(m, k) != v {
				continue series
			}
		}
		switch {
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Untyped != nil:
			total += m.Untyped.GetValue()
		}
	}
	return total, true
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// scrapeURL reads a /metrics endpoint served over plain HTTP (the controller's).
func scrapeURL(ctx context.Context, url string) (families, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return parseMetrics(resp.Body)
}

// apiServerWatches is the number of WATCH requests kube-apiserver of cl is
// serving (apiserver_longrunning_requests), from every client: the
// difference before and with claimwarden running is claimwarden's.
func apiServerWatches(ctx context.Context, cl *cluster) (int, error) {
	cs, err := kubernetes.NewForConfig(cl.env.Config)
	if err != nil {
		return 0, err
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("the %s's kube-apiserver /metrics: %w", cl.name, err)
	}
	fams, err := parseMetrics(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("the %s's kube-apiserver /metrics: %w", cl.name, err)
	}
	n, ok := fams.sum("apiserver_longrunning_requests", map[string]string{"verb": "WATCH"})
	if !ok {
		return 0, fmt.Errorf("the %s's kube-apiserver exports no apiserver_longrunning_requests", cl.name)
	}
	return int(n), nil
}

// memory is a process's resident memory as the kernel accounts it, in KiB:
// VmRSS now, VmHWM the peak since it started.
type memory struct {
	RSS, HWM int64
}

// readMemory reads /proc/<pid>/status (Linux only).
func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	return parseStatus(f)
}

// parseStatus reads VmRSS and VmHWM from a /proc/<pid>/status.
func parseStatus(r io.Reader) (memory, error) {
	var m memory
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text()) // "VmRSS:	  81234 kB"
		if len(fields) < 2 {
			continue
		}
		var dst *int64
		switch fields[0] {
		case "VmRSS:":
			dst = &m.RSS
		case "VmHWM:":
			dst = &m.HWM
		default:
			continue
		}
		v, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s %q: %w", fields[0], fields[1], err)
		}
		*dst = v
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if m.RSS == 0 || m.HWM == 0 {
		return m, fmt.Errorf("no VmRSS or VmHWM in the process status")
	}
	return m, nil
}

// loadAverage is the first field of /proc/loadavg: the machine's load over
// the last minute, which says how much others shared the cores.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
