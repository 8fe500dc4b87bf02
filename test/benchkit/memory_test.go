package benchkit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/prometheus/procfs"
)

func TestReadMemory(t *testing.T) {
	dir := t.TempDir()
	write := func(pid, status string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, "status"), []byte(status), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("42", "Name:\tclaimwarden\nVmHWM:\t  120000 kB\nVmRSS:\t   81234 kB\n")
	write("2", "Name:\tkthreadd\n")
	fs, err := procfs.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := readMemory(fs, 42); err != nil || m.RSSKiB != 81234 || m.HWMKiB != 120000 {
		t.Errorf("readMemory = %+v, %v; want RSS 81234, HWM 120000 KiB", m, err)
	}
	if _, err := readMemory(fs, 2); err == nil {
		t.Error("a status without VmRSS (a kernel thread's) read as memory")
	}
	if _, err := readMemory(fs, 7); err == nil {
		t.Error("a process that is not there read as memory")
	}
}

func TestReadMemoryOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	m, err := ReadMemory(os.Getpid())
	if err != nil || m.RSSKiB <= 0 || m.HWMKiB < m.RSSKiB {
		t.Errorf("ReadMemory(self) = %+v, %v; want RSS > 0 and a peak at least as high", m, err)
	}
}
