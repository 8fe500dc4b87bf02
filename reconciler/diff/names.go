package diff

import (
	"strconv"
	"strings"
)

// SplitOrdinal cuts "<stem>-<ordinal>", the ordinal as the StatefulSet
// controller prints it (no sign, no leading zero).
func SplitOrdinal(name string) (string, int32, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != name[i+1:] {
		return "", 0, false
	}
	return name[:i], int32(n), true
}
