package prcomment

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxKey bounds a key: it is repeated in every comment and in messages.
const maxKey = 100

// Marker is the hidden first line of the comment with key: an HTML comment,
// which hosts keep in the stored body and do not render.
func Marker(key string) string {
	if key == "" {
		return "<!-- claimwarden:check -->"
	}
	return "<!-- claimwarden:check " + key + " -->"
}

// checkKey refuses keys that could break out of the marker or be confused
// with another key's marker. "--" may not appear inside an HTML comment.
func checkKey(key string) error {
	if len(key) > maxKey {
		return fmt.Errorf("comment key %q is longer than %d characters", key, maxKey)
	}
	for _, r := range key {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/@+=-", r)
		if !ok {
			return fmt.Errorf("comment key %q: %q is not allowed (letters, digits and . _ : / @ + = - are)", key, r)
		}
	}
	if strings.Contains(key, "--") {
		return fmt.Errorf("comment key %q contains \"--\", which ends an HTML comment", key)
	}
	return nil
}

// compose is the comment text for key and body: the marker, then body,
// truncated so that the whole is at most limit characters (Unicode code
// points; 0: no limit), with a note saying so; a code block or a folded
// <details> block the cut leaves open is closed first. hostName names the
// host in the note.
func compose(key, body string, limit int, hostName string) (string, error) {
	head := Marker(key) + "\n"
	text := head + body
	total := utf8.RuneCountInString(text)
	if limit <= 0 || total <= limit {
		return text, nil
	}
	note := fmt.Sprintf("\n\n**Truncated:** this report has %d characters, more than a %s comment may hold (%d); `claimwarden check` prints it whole.",
		utf8.RuneCountInString(body), hostName, limit)
	const closeFence, closeDetails = "\n```", "\n</details>"
	budget := limit - utf8.RuneCountInString(head) - utf8.RuneCountInString(note) - len(closeFence) - len(closeDetails)
	if budget <= 0 {
		return "", errors.New("the marker and the truncation note alone exceed the limit")
	}
	kept := firstRunes(body, budget)
	// End on a whole line when one ends in the second half of what is kept.
	if i := strings.LastIndexByte(kept, '\n'); i > len(kept)/2 {
		kept = kept[:i]
	}
	if openFence(kept) {
		kept += closeFence // or the note would render as code
	}
	if strings.Count(kept, "<details>") > strings.Count(kept, "</details>") {
		kept += closeDetails // or the note would be folded away
	}
	return head + kept + note, nil
}

// firstRunes is the first n runes of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// openFence reports whether s leaves a ``` code block open.
func openFence(s string) bool {
	open := false
	for line := range strings.Lines(s) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			open = !open
		}
	}
	return open
}
