package pullrequest

import (
	"fmt"
	"io"
	"path"
	"strings"
)

// readBounded reads a file's content, at most MaxFileBytes.
func readBounded(r io.Reader, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", what, MaxFileBytes, ErrTooLarge)
	}
	return b, nil
}

// under reports whether file (a path from the repository's root) is in
// directory dir ("" or "." is the root) at any depth.
func under(file, dir string) bool {
	dir = cleanDir(dir)
	return dir == "" || strings.HasPrefix(file, dir+"/")
}

// cleanDir is dir relative to the repository's root, without leading or
// trailing slashes; "" is the root.
func cleanDir(dir string) string {
	return strings.Trim(path.Clean("/"+dir), "/")
}
