package helm

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// fullRelease is a record with every part Helm stores filled in, the
// chart's files, templates and values, and the values given, among them.
func fullRelease() *rspb.Release {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return &rspb.Release{
		Name: "web", Namespace: "shop", Version: 7, Manifest: manifest,
		Info: &rspb.Info{FirstDeployed: now, LastDeployed: now, Status: rcommon.StatusFailed,
			Description: upgradeFailed, Notes: "web is at http://web"},
		Chart: &chartv2.Chart{
			Metadata:  &chartv2.Metadata{Name: "web-chart", Version: "0.2.0", AppVersion: "1.27", Annotations: map[string]string{"name": "not-this"}},
			Lock:      &chartv2.Lock{Generated: now, Digest: "sha256:abc"},
			Templates: []*common.File{{Name: "templates/statefulset.yaml", ModTime: now, Data: []byte("kind: StatefulSet\n")}},
			Files:     []*common.File{{Name: "README.md", ModTime: now, Data: []byte("# web\n")}},
			Values:    map[string]any{"name": "not-this", "nested": map[string]any{"version": 99.0, "list": []any{map[string]any{}, []any{}}}},
			Schema:    []byte(`{"type":"object"}`),
		},
		Config:      map[string]any{"replicas": 3.0, "manifest": "not-this"},
		Hooks:       []*rspb.Hook{{Name: "pre", Kind: "Job", Manifest: "kind: Job\n", Events: []rspb.HookEvent{rspb.HookPreUpgrade}}},
		ApplyMethod: "ssa",
	}
}

// record is data as a Secret holds it, without gzip.
func record(data string) []byte {
	return []byte(base64.StdEncoding.EncodeToString([]byte(data)))
}

func TestDecodeRelease(t *testing.T) {
	rel, err := decodeRelease(encode(t, fullRelease()), DefaultMaxReleaseBytes)
	if err != nil {
		t.Fatal(err)
	}
	want := Release{Name: "web", Namespace: "shop", Version: 7, Status: rcommon.StatusFailed, Description: upgradeFailed,
		ChartName: "web-chart", ChartVersion: "0.2.0", Manifest: manifest}
	if *rel != want {
		t.Errorf("decoded %+v\nwant    %+v", *rel, want)
	}

	t.Run("uncompressed, as the oldest records are", func(t *testing.T) {
		js, _ := json.Marshal(fullRelease())
		rel, err := decodeRelease(record(string(js)), DefaultMaxReleaseBytes)
		if err != nil || *rel != want {
			t.Fatalf("got %+v, %v", rel, err)
		}
	})
	t.Run("as encoding/json reads it", func(t *testing.T) {
		// Keys match case-insensitively, the last of a key given twice
		// wins, unknown keys and nulls are skipped, a missing info leaves
		// the status empty.
		rel, err := decodeRelease(record(`{"name":"old","NAME":"web","namespace":"shop","version":1,"Version":2,
			"extra":{"x":[1,"2",null,true]},"chart":null,"info":null,"manifest":null}`), DefaultMaxReleaseBytes)
		want := Release{Name: "web", Namespace: "shop", Version: 2}
		if err != nil || *rel != want {
			t.Fatalf("got %+v, %v", rel, err)
		}
	})
	t.Run("bounded after unpacking", func(t *testing.T) {
		// 64 MiB of zeros gzip to some 64 KiB: the bound is on what is unpacked.
		big := release(4)
		big.Manifest = strings.Repeat("\x00", 64<<20)
		data := encode(t, big)
		if len(data) > 1<<20 {
			t.Fatalf("the test's record is %d bytes, not a Secret's size", len(data))
		}
		_, err := decodeRelease(data, 1<<20)
		if err == nil || err.Error() != "the record is larger than 1048576 bytes unpacked (maxReleaseBytes)" {
			t.Errorf("got %v", err)
		}
	})
	t.Run("nested as deep as encoding/json allows", func(t *testing.T) {
		deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
		if _, err := decodeRelease(record(`{"config":`+deep+`,"name":"web"}`), DefaultMaxReleaseBytes); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDecodeReleaseErrors(t *testing.T) {
	gz := encode(t, release(4))
	zipped, _ := base64.StdEncoding.DecodeString(string(gz))
	corrupt := append([]byte(nil), zipped...)
	corrupt[len(corrupt)-5] ^= 0xff // the CRC-32 in gzip's trailer
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"empty":      {nil, "empty"},
		"not base64": {[]byte("!!!"), "not base64: illegal base64 data at input byte 0"},
		"not gzip":   {record("\x1f\x8b\x08"), "not gzip: unexpected EOF"},
		"truncated gzip": {[]byte(base64.StdEncoding.EncodeToString(zipped[:len(zipped)/2])),
			"unpacking: unexpected EOF"},
		"corrupt gzip":   {[]byte(base64.StdEncoding.EncodeToString(corrupt)), "unpacking: gzip: invalid checksum"},
		"not JSON":       {record("{"), "not a Helm release: the record: unexpected EOF"},
		"truncated":      {record(`{"name":"web","manifest":"---\nkind`), "not a Helm release: manifest: unexpected EOF"},
		"truncated skip": {record(`{"chart":{"files":[{"data":"eA=="}`), "not a Helm release: chart.files: unexpected EOF"},
		"garbled":        {record(`{"name":"web",}`), "not a Helm release: the record: invalid character '}' looking for beginning of object key string"},
		"garbled skip":   {record(`{"config":{"a" 1}}`), "not a Helm release: config: expected colon after object key"},
		"garbled skipped value": {record(`{"config":[1,,2]}`),
			"not a Helm release: config: invalid character ',' looking for beginning of value"},
		"truncated skipped string": {record(`{"hooks":[{"manifest":"kind: Job`),
			"not a Helm release: hooks: unexpected EOF"},
		"not an object":   {record(`["web"]`), "not a Helm release: the record: [ is not an object"},
		"chart not one":   {record(`{"chart":"web"}`), "not a Helm release: chart: web is not an object"},
		"wrong type":      {record(`{"version":"4"}`), "not a Helm release: version: json: cannot unmarshal string into Go value of type int"},
		"wrong info type": {record(`{"info":{"status":1}}`), "not a Helm release: info.status: json: cannot unmarshal number into Go value of type common.Status"},
		"data after":      {record(`{"name":"web"} {}`), "not a Helm release: data after the release object"},
		"too deep": {record(`{"chart":{"values":` + strings.Repeat(`{"a":`, maxDepth+1)),
			"not a Helm release: chart.values: nested deeper than 10000 levels"},
	} {
		t.Run(name, func(t *testing.T) {
			rel, err := decodeRelease(tc.data, DefaultMaxReleaseBytes)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %+v, %v\nwant error %s", rel, err, tc.want)
			}
		})
	}
}

// FuzzDecodeRelease: what is not JSON is refused, and a record Helm's own
// type decodes reads the same (info aside: Helm decodes it by way of a map).
func FuzzDecodeRelease(f *testing.F) {
	js, _ := json.Marshal(fullRelease())
	f.Add(string(js))
	f.Add(`{"name":"web","NAME":"x","version":1,"chart":{"metadata":{"name":"c"},"values":{"a":[{},[]]}}}`)
	f.Fuzz(func(t *testing.T, js string) {
		rel, err := decodeRelease(record(js), DefaultMaxReleaseBytes)
		if !json.Valid([]byte(js)) {
			if err == nil {
				t.Fatalf("decoded invalid JSON as %+v", rel)
			}
			return
		}
		var helm rspb.Release
		if json.Unmarshal([]byte(js), &helm) != nil {
			return
		}
		if err != nil {
			t.Fatalf("Helm decodes it, decodeRelease: %v", err)
		}
		want := Release{Name: helm.Name, Namespace: helm.Namespace, Version: helm.Version, Manifest: helm.Manifest,
			Status: rel.Status, Description: rel.Description}
		if helm.Chart != nil && helm.Chart.Metadata != nil {
			want.ChartName, want.ChartVersion = helm.Chart.Metadata.Name, helm.Chart.Metadata.Version
		}
		if *rel != want {
			t.Fatalf("decoded %+v, Helm %+v", *rel, want)
		}
	})
}
