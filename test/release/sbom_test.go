package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestSBOMListsModulesOfTheBinary(t *testing.T) {
	self, err := os.Executable() // a test binary has build information too
	if err != nil {
		t.Fatal(err)
	}
	doc, err := sbomOf(self, "v0.1.0", "20230311+deb12u1", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || doc.Relationships[0].Type != "DESCRIBES" {
		t.Fatalf("document %s, first relationship %+v", doc.SPDXVersion, doc.Relationships[0])
	}
	purls := map[string]bool{}
	for _, p := range doc.Packages {
		for _, r := range p.ExternalRefs {
			purls[r.ReferenceLocator] = true
		}
	}
	for _, want := range []string{"pkg:golang/github.com/google/go-containerregistry@v0.22.1", "pkg:deb/debian/ca-certificates@20230311+deb12u1?arch=all"} {
		if !purls[want] {
			t.Errorf("no package with purl %s", want)
		}
	}
	if !strings.HasPrefix(doc.DocumentNamespace, "https://github.com/claimwarden/claimwarden/spdx/v0.1.0/") {
		t.Errorf("namespace %s", doc.DocumentNamespace)
	}
}

func TestSBOMOfANonGoFile(t *testing.T) {
	if _, err := sbomOf(writeTemp(t, "x", "not a binary"), "v0.1.0", "", time.Unix(0, 0)); err == nil {
		t.Error("no error for a file without Go build information")
	}
}
