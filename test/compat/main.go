// Command compat runs, on the control plane of each Kubernetes version the
// project supports, the tests whose outcome depends on the version, and
// prints the support table (make compat; KUBE_VERSIONS= picks versions).
// Each version's kube-apiserver, kube-controller-manager and kube-scheduler
// are built from the module proxy and cached like the rest of the test
// environment; everything else is the one `make testenv` built.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// supportPage is the page, relative to the repository, whose support table
// make compat rewrites.
const supportPage = "docs/kubernetes-versions.md"

// allVersions are the newest patch releases of 1.30 to 1.37 whose modules
// the module proxy serves (it refuses some staging modules of v1.31.14 and
// v1.32.13, hence v1.31.13 and v1.32.9).
const allVersions = "v1.30.14 v1.31.13 v1.32.9 v1.33.13 v1.34.4 v1.35.4 v1.36.3 v1.37.2"

func main() {
	versions := flag.String("versions", envOr("KUBE_VERSIONS", allVersions), "Kubernetes versions, space-separated")
	out := flag.String("out", "dist/compat", "directory for each version's go test -json output and matrix.md")
	readme := flag.String("readme", supportPage, "page whose support table is rewritten when every version ran (empty: none)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("[compat] ")
	if err := run(strings.Fields(*versions), *out, *readme); err != nil {
		log.Fatal(err)
	}
}

func run(versions []string, out, readme string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var cols []column
	for _, v := range versions {
		cols = append(cols, runVersion(v, out))
	}
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	table := fmt.Sprintf("Measured by `make compat` on %s at commit %s.\n\n%s",
		time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(commit)), renderMatrix(scenarios, cols))
	if err := os.WriteFile(filepath.Join(out, "matrix.md"), []byte(table), 0o644); err != nil {
		return err
	}
	fmt.Print(table)
	if readme != "" && strings.Join(versions, " ") == allVersions {
		if err := rewriteTable(readme, table); err != nil {
			return err
		}
		log.Printf("rewrote the support table in %s", readme)
	}
	for _, c := range cols {
		for _, s := range scenarios {
			if text, _ := cell(s, c); text != "✓" {
				return fmt.Errorf("not every scenario passed on every version: see %s", filepath.Join(out, "matrix.md"))
			}
		}
	}
	return nil
}

// runVersion builds version's control plane and runs the scenarios' tests on it.
func runVersion(version, out string) column {
	col := column{Version: version, Results: map[string]*result{}}
	dir, err := binDir(version)
	if err != nil {
		col.Failed = err.Error()
		return col
	}
	start := time.Now()
	build := exec.Command("bash", "test/testenv/build.sh", "core")
	build.Env = append(os.Environ(), "KUBE_VERSION="+version, "TESTENV_OUT="+dir)
	var buildLog bytes.Buffer
	build.Stdout, build.Stderr = &buildLog, &buildLog
	if err := build.Run(); err != nil {
		col.Failed = fmt.Sprintf("building the control plane: %v: %s", err, lastLine(buildLog.String()))
		return col
	}
	if strings.Contains(buildLog.String(), "building kube-apiserver") {
		log.Printf("%s: built the control plane in %s", version, time.Since(start).Round(time.Second))
	}
	jsonOut, err := os.Create(filepath.Join(out, version+".json"))
	if err != nil {
		col.Failed = err.Error()
		return col
	}
	defer jsonOut.Close()
	pkgs, tests := byPackage(scenarios)
	for _, pkg := range pkgs {
		log.Printf("%s: go test %s", version, pkg)
		var buf bytes.Buffer
		cmd := exec.Command("go", "test", "-count=1", "-json", "-timeout", "20m",
			"-run", "^("+strings.Join(quoteAll(tests[pkg]), "|")+")$", pkg)
		cmd.Env = append(os.Environ(), "TESTENV_BIN_DIR="+dir)
		cmd.Stdout, cmd.Stderr = &buf, &buf
		_ = cmd.Run() // a failed test is a cell of the table, not the end of the run
		_, _ = jsonOut.Write(buf.Bytes())
		if err := parseResults(&buf, col.Results); err != nil {
			col.Failed = err.Error()
		}
	}
	return col
}

// binDir makes bin/testenv-<version>: links to everything `make testenv`
// built, whose control-plane binaries build.sh then replaces with version's.
func binDir(version string) (string, error) {
	src, err := filepath.Abs(filepath.Join("bin", "testenv"))
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", fmt.Errorf("%w: run make testenv first", err)
	}
	dir := src + "-" + version
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, e := range entries {
		target := filepath.Join(src, e.Name())
		if resolved, err := filepath.EvalSymlinks(target); err == nil {
			target = resolved
		}
		link := filepath.Join(dir, e.Name())
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = regexp.QuoteMeta(n)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
