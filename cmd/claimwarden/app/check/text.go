package check

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// plural is "1 claim" or "2 claims".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func keyList(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

func quoteOrUnset(p *string) string {
	if p == nil {
		return "(unset)"
	}
	return strconv.Quote(*p)
}
