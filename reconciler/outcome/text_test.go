package outcome

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShortDescription(t *testing.T) {
	exact := strings.Repeat("ä", MaxDescription) // 140 characters, 280 bytes
	if got := ShortDescription(exact); got != exact {
		t.Errorf("a 140-character description was changed to %q", got)
	}
	long := strings.Repeat("ä", MaxDescription) + "b"
	got := ShortDescription(long)
	if n := utf8.RuneCountInString(got); n != MaxDescription {
		t.Errorf("truncated to %d characters, want %d", n, MaxDescription)
	}
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, strings.Repeat("ä", MaxDescription-1)) {
		t.Errorf("truncated = %q, want 139 characters and …", got)
	}
	if !utf8.ValidString(got) {
		t.Error("truncation split a UTF-8 sequence")
	}
	if ShortDescription("") != "" || ShortDescription("short") != "short" {
		t.Error("short descriptions must be kept")
	}
}
