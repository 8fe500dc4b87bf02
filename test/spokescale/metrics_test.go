package main

import (
	"strings"
	"testing"
)

func TestFamiliesSum(t *testing.T) {
	fams, err := parseMetrics(strings.NewReader(`# TYPE apiserver_longrunning_requests gauge
apiserver_longrunning_requests{resource="pods",verb="WATCH"} 7
apiserver_longrunning_requests{resource="statefulsets",verb="WATCH"} 3
apiserver_longrunning_requests{resource="pods",verb="CONNECT"} 2
`))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := fams.sum("apiserver_longrunning_requests", map[string]string{"verb": "WATCH"}); !ok || n != 10 {
		t.Errorf("WATCH sum = %v, %v; want 10, true", n, ok)
	}
	if n, ok := fams.sum("apiserver_longrunning_requests", nil); !ok || n != 12 {
		t.Errorf("sum = %v, %v; want 12, true", n, ok)
	}
	if _, ok := fams.sum("go_goroutines", nil); ok {
		t.Error("a family that is not there was found")
	}
}

func TestParseStatus(t *testing.T) {
	m, err := parseStatus(strings.NewReader("Name:\tclaimwarden\nVmHWM:\t  120000 kB\nVmRSS:\t   81234 kB\n"))
	if err != nil || m.RSS != 81234 || m.HWM != 120000 {
		t.Errorf("parseStatus = %+v, %v; want RSS 81234, HWM 120000", m, err)
	}
	if _, err := parseStatus(strings.NewReader("Name:\tkthreadd\n")); err == nil {
		t.Error("a status without VmRSS (a kernel thread's) parsed")
	}
}
