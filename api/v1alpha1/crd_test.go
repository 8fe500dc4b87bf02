package v1alpha1_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func readCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile("../../config/crd/bases/claimwarden.dev_volumeclaimrollouts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	return &crd
}

// kubectl explain vcr.status documents every field: each property of the
// status schema, at any depth, has a description.
func TestEveryStatusFieldIsExplained(t *testing.T) {
	crd := readCRD(t)
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	var undocumented []string
	var walk func(path string, s apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s apiextensionsv1.JSONSchemaProps) {
		if strings.TrimSpace(s.Description) == "" {
			undocumented = append(undocumented, path)
		}
		for name, p := range s.Properties {
			walk(path+"."+name, p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			for name, p := range s.Items.Schema.Properties {
				walk(path+"[]."+name, p)
			}
		}
	}
	walk("status", status)
	slices.Sort(undocumented)
	if len(undocumented) > 0 {
		t.Errorf("kubectl explain finds no description for:\n%s", strings.Join(undocumented, "\n"))
	}
}

// kubectl get vcr -o wide shows the proposal's source and revision; the
// default columns stay as they were.
func TestWideColumnsShowTheSource(t *testing.T) {
	crd := readCRD(t)
	var wide, narrow []string
	for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
		if c.Priority > 0 {
			wide = append(wide, c.Name+"="+c.JSONPath)
		} else {
			narrow = append(narrow, c.Name)
		}
	}
	wantWide := []string{"Strategy=.status.strategy", "SourceKind=.status.proposal.source.kind", "Source=.status.proposal.source.name", "Revision=.status.proposal.source.revision"}
	if !slices.Equal(wide, wantWide) {
		t.Errorf("-o wide columns %q, want %q", wide, wantWide)
	}
	wantNarrow := []string{"Ready", "Compatible", "Updating", "Denied", "OverSized", "Capacity", "Usage", "PullRequest", "Status", "Age"}
	if !slices.Equal(narrow, wantNarrow) {
		t.Errorf("default columns %q, want %q", narrow, wantNarrow)
	}
}
