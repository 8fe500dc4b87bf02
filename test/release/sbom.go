package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// SPDX 2.3 (JSON) as far as an SBOM of a Go binary needs: the Go modules
// compiled in, as `go version -m` lists them, with their purls, and the
// Debian package the CA certificates come from. ko writes the same from the
// same data; this needs no ko.
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string         `json:"name"`
	SPDXID           string         `json:"SPDXID"`
	VersionInfo      string         `json:"versionInfo,omitempty"`
	DownloadLocation string         `json:"downloadLocation"`
	FilesAnalyzed    bool           `json:"filesAnalyzed"`
	LicenseConcluded string         `json:"licenseConcluded"`
	LicenseDeclared  string         `json:"licenseDeclared"`
	CopyrightText    string         `json:"copyrightText"`
	ExternalRefs     []spdxExtRef   `json:"externalRefs,omitempty"`
	Checksums        []spdxChecksum `json:"checksums,omitempty"`
}

type spdxExtRef struct {
	ReferenceCategory string `json:"referenceCategory"`
	ReferenceType     string `json:"referenceType"`
	ReferenceLocator  string `json:"referenceLocator"`
}

type spdxChecksum struct {
	Algorithm     string `json:"algorithm"`
	ChecksumValue string `json:"checksumValue"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

const noAssertion = "NOASSERTION"

func sbomCmd(args []string) error {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	bin := fs.String("binary", "", "Go binary to describe")
	version := fs.String("version", "", "version of the release")
	caVersion := fs.String("ca-certificates-version", "", "version of Debian's ca-certificates package in the image")
	out := fs.String("out", "", "SPDX JSON file written")
	epoch := fs.Int64("source-date-epoch", 0, "creation time, seconds since 1970")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "binary", "version", "out"); err != nil {
		return err
	}
	doc, err := sbomOf(*bin, *version, *caVersion, time.Unix(*epoch, 0).UTC())
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*out, append(data, '\n'), 0o644)
}

func sbomOf(bin, version, caVersion string, created time.Time) (spdxDocument, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return spdxDocument{}, fmt.Errorf("build information of %s: %w", bin, err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return spdxDocument{}, err
	}
	sum := sha256.Sum256(data)
	main := spdxPackage{
		Name: bi.Main.Path, SPDXID: "SPDXRef-Package-claimwarden", VersionInfo: version,
		DownloadLocation: "https://github.com/claimwarden/claimwarden", LicenseDeclared: "Apache-2.0",
		ExternalRefs: []spdxExtRef{purl("golang", bi.Main.Path, version)},
		Checksums:    []spdxChecksum{{Algorithm: "SHA256", ChecksumValue: hex.EncodeToString(sum[:])}},
	}
	doc := spdxDocument{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              "claimwarden-" + version,
		DocumentNamespace: "https://github.com/claimwarden/claimwarden/spdx/" + version + "/" + hex.EncodeToString(sum[:8]),
		CreationInfo:      spdxCreationInfo{Created: created.Format(time.RFC3339), Creators: []string{"Tool: claimwarden-release"}},
		Packages:          []spdxPackage{main, goPackage("stdlib", bi.GoVersion, "SPDXRef-Package-stdlib")},
		Relationships: []spdxRelationship{
			{"SPDXRef-DOCUMENT", "DESCRIBES", main.SPDXID},
			{main.SPDXID, "DEPENDS_ON", "SPDXRef-Package-stdlib"},
		},
	}
	for i, dep := range bi.Deps {
		m := dep
		if dep.Replace != nil {
			m = dep.Replace
		}
		id := fmt.Sprintf("SPDXRef-Package-go-%d", i)
		doc.Packages = append(doc.Packages, goPackage(m.Path, m.Version, id))
		doc.Relationships = append(doc.Relationships, spdxRelationship{main.SPDXID, "DEPENDS_ON", id})
	}
	if caVersion != "" {
		doc.Packages = append(doc.Packages, spdxPackage{
			Name: "ca-certificates", SPDXID: "SPDXRef-Package-deb-ca-certificates", VersionInfo: caVersion,
			DownloadLocation: noAssertion, LicenseDeclared: noAssertion,
			ExternalRefs: []spdxExtRef{{"PACKAGE-MANAGER", "purl", "pkg:deb/debian/ca-certificates@" + caVersion + "?arch=all"}},
		})
		doc.Relationships = append(doc.Relationships, spdxRelationship{"SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-deb-ca-certificates"})
	}
	for i := range doc.Packages {
		p := &doc.Packages[i]
		p.LicenseConcluded, p.CopyrightText = noAssertion, noAssertion
		if p.LicenseDeclared == "" {
			p.LicenseDeclared = noAssertion
		}
	}
	return doc, nil
}

func goPackage(path, version, id string) spdxPackage {
	return spdxPackage{Name: path, SPDXID: id, VersionInfo: version, DownloadLocation: noAssertion,
		ExternalRefs: []spdxExtRef{purl("golang", path, version)}}
}

func purl(typ, path, version string) spdxExtRef {
	return spdxExtRef{"PACKAGE-MANAGER", "purl", "pkg:" + typ + "/" + strings.ToLower(path) + "@" + version}
}
