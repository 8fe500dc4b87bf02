package main

import "testing"

func TestParseSpokes(t *testing.T) {
	got, err := parseSpokes("0, 1,3,10")
	if err != nil || len(got) != 4 || got[3] != 10 {
		t.Errorf("parseSpokes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,1", "-1", "101", "x"} {
		if _, err := parseSpokes(bad); err == nil {
			t.Errorf("parseSpokes(%q) accepted", bad)
		}
	}
}
