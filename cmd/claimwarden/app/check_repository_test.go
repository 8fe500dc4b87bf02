package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --repository reaches the policy input (and through it every message)
// without user information; one that cannot be parsed safely is a usage
// error that does not quote it.
func TestCheckRepositoryWithoutUserInformation(t *testing.T) {
	const grow = "testdata/check/grow/"
	dir := t.TempDir()
	echo := `package claimwarden.claims

deny contains {"policy": "echo", "msg": sprintf("repository %s", [input.source.repository])}
`
	if err := os.WriteFile(filepath.Join(dir, "echo.rego"), []byte(echo), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"https://x-access-token:SECRET@github.com/o/r.git", "git:SECRET@github.com:o/r"} {
		code, out := runCheckCLI(t, nil, "-f", grow+"pr", "--base", grow+"base", "--policy", dir, "-o", "json", "--repository", repo)
		out = withoutCommandLine(out)
		if code != exitDenied || !strings.Contains(out, "repository ") {
			t.Errorf("--repository %s: exit code %d, want %d with the echo policy's denial:\n%s", repo, code, exitDenied, out)
		}
		if strings.Contains(out, "SECRET") {
			t.Errorf("--repository %s: the credential reached the output:\n%s", repo, out)
		}
	}
	code, out := runCheckCLI(t, nil, "-f", grow+"pr", "--base", grow+"base", "--repository", "https://a#SECRET@github.com/o/r")
	out = withoutCommandLine(out)
	if code != exitCheckInput || !strings.Contains(out, "--repository") || strings.Contains(out, "SECRET") {
		t.Errorf("ambiguous --repository: exit code %d, want %d naming the flag, not the credential:\n%s", code, exitCheckInput, out)
	}
}

// withoutCommandLine drops the "$ claimwarden check ..." line runCheckCLI
// puts first: it echoes the arguments.
func withoutCommandLine(out string) string {
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}
