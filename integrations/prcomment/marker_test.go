package prcomment

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMarkerKeepsKeysApart(t *testing.T) {
	if got, want := Marker("prod"), "<!-- claimwarden:check prod -->"; got != want {
		t.Errorf("Marker(prod) = %q, want %q", got, want)
	}
	// One key's marker must not be found in another's comment.
	for _, pair := range [][2]string{{"prod", "prod-eu"}, {"", "prod"}, {"eu/prod", "prod"}} {
		if strings.Contains(Marker(pair[1]), Marker(pair[0])) || strings.Contains(Marker(pair[0]), Marker(pair[1])) {
			t.Errorf("markers of %q and %q contain one another", pair[0], pair[1])
		}
	}
}

func TestCheckKey(t *testing.T) {
	for _, ok := range []string{"", "prod", "eu-west-1/shop", "cluster@ctx:ns.name+x=y_z"} {
		if err := checkKey(ok); err != nil {
			t.Errorf("checkKey(%q): %v", ok, err)
		}
	}
	for bad, want := range map[string]string{
		"a--b":                   `contains "--"`,
		"a>b":                    `'>' is not allowed`,
		"a b":                    `' ' is not allowed`,
		"a\nb":                   `'\n' is not allowed`,
		"é":                      `'é' is not allowed`,
		strings.Repeat("k", 101): "longer than 100",
	} {
		if err := checkKey(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkKey(%q) = %v, want an error containing %q", bad, err, want)
		}
	}
}

func TestComposeWithinLimit(t *testing.T) {
	got, err := compose("k", "## report\n", 100, "GitHub")
	if err != nil || got != "<!-- claimwarden:check k -->\n## report\n" {
		t.Errorf("compose = %q, %v", got, err)
	}
	// Exactly at the limit is not truncated.
	body := strings.Repeat("x", 100-len(Marker("k")+"\n"))
	if got, _ := compose("k", body, 100, "GitHub"); got != Marker("k")+"\n"+body {
		t.Errorf("a comment of exactly the limit was changed")
	}
	if got, _ := compose("k", strings.Repeat("x", 2_000_000), 0, "Gitea"); utf8.RuneCountInString(got) != 2_000_000+len(Marker("k")+"\n") {
		t.Errorf("no limit: comment was cut")
	}
}

// An over-long report is cut at a line end to exactly fit, in code points
// (multi-byte characters count once), an open code block is closed, and
// the note says how long the report was.
func TestComposeTruncates(t *testing.T) {
	line := "| web-0 | 10Gi → 20Gi | allowed |\n" // 33 code points, 37 bytes
	body := "## claimwarden check\n```\n" + strings.Repeat(line, 3000) + "```\n"
	got, err := compose("prod", body, githubMaxBody, "GitHub")
	if err != nil {
		t.Fatal(err)
	}
	n := utf8.RuneCountInString(got)
	if n > githubMaxBody || n < githubMaxBody-len(line)-10 {
		t.Errorf("truncated comment has %d code points, want at most %d and not much fewer", n, githubMaxBody)
	}
	if !strings.HasPrefix(got, Marker("prod")+"\n## claimwarden check\n```\n| web-0") {
		t.Errorf("truncated comment lost its start: %q", got[:80])
	}
	wantNote := "\n```\n\n**Truncated:** this report has " + strconv.Itoa(utf8.RuneCountInString(body)) + " characters, more than a GitHub comment may hold (65536); `claimwarden check` prints it whole."
	if !strings.HasSuffix(got, wantNote) {
		t.Errorf("truncated comment ends %q, want the fence closed and the note %q", got[len(got)-200:], wantNote)
	}
	kept := strings.TrimSuffix(got, wantNote)
	if !strings.HasSuffix(kept, "| allowed |") {
		t.Errorf("cut inside a line: ends %q", kept[len(kept)-40:])
	}
	if !utf8.ValidString(got) {
		t.Error("cut inside a multi-byte character")
	}
}

// A cut inside the folded warnings closes them, or the note would be
// folded away with them.
func TestComposeClosesDetails(t *testing.T) {
	body := "## report\n\n<details><summary>3000 warnings</summary>\n\n" + strings.Repeat("- a.yaml:1: a warning\n", 3000) + "\n</details>\n"
	got, err := compose("k", body, githubMaxBody, "GitHub")
	if err != nil {
		t.Fatal(err)
	}
	if utf8.RuneCountInString(got) > githubMaxBody || !strings.Contains(got, "- a.yaml:1: a warning\n</details>\n\n**Truncated:**") {
		t.Errorf("truncated comment ends %q, want the details closed before the note", got[len(got)-200:])
	}
}

func TestComposeRefusesTinyLimit(t *testing.T) {
	if _, err := compose("k", strings.Repeat("x", 500), 100, "GitHub"); err == nil {
		t.Error("compose fit a marker and a note into 100 characters")
	}
}
