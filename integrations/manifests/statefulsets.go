package manifests

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsjson "sigs.k8s.io/json"
)

// DefaultNamespace is the namespace of a StatefulSet that names none, as
// kubectl applies it.
const DefaultNamespace = "default"

// StatefulSet is a typed StatefulSet and where it was written.
type StatefulSet struct {
	*appsv1.StatefulSet
	Location
}

// StatefulSets picks the StatefulSets (apps/v1) out of objs, typed, in
// input order. It refuses, naming kind, name, file, line and field:
//
//   - a StatefulSet defined twice (same namespace and name; both places named),
//   - another kind with spec.volumeClaimTemplates (its claims cannot be
//     checked, and it is likely a StatefulSet with a wrong kind or apiVersion),
//   - a template without a name, with a repeated name, or without a valid
//     storage request: a quantity that parses, is above zero and fits in
//     int64 bytes (8Ei), like every other quantity of the templates,
//   - a quantity anywhere whose text is too long or has an absurd exponent
//     (parsing it would take minutes),
//   - a field that does not fit the StatefulSet type.
//
// A StatefulSet without spec.replicas gets 1 (the API server's default)
// and a warning; one without a namespace gets DefaultNamespace. Unknown
// fields are warnings. Every problem is reported, one per line.
func StatefulSets(objs []Object) ([]StatefulSet, []Warning, error) {
	var (
		out   []StatefulSet
		warns []Warning
		errs  []error
	)
	first := map[string]Location{}
	for _, o := range objs {
		if o.GetKind() != "StatefulSet" || o.GetAPIVersion() != "apps/v1" {
			if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "volumeClaimTemplates"); found {
				errs = append(errs, o.fieldError([]any{"spec", "volumeClaimTemplates"}, "spec.volumeClaimTemplates",
					"only a StatefulSet (apiVersion apps/v1) has volume claim templates claimwarden can check; this is apiVersion %q", o.GetAPIVersion()))
			}
			continue
		}
		if o.GetName() == "" {
			errs = append(errs, fmt.Errorf("%s: metadata.name is not set", o.describe()))
			continue
		}
		if o.GetNamespace() == "" {
			o.SetNamespace(DefaultNamespace)
		}
		key := o.GetNamespace() + "/" + o.GetName()
		if loc, dup := first[key]; dup {
			errs = append(errs, fmt.Errorf("StatefulSet %s is defined twice: %s and %s", key, loc, o.Location))
			continue
		}
		first[key] = o.Location
		if err := checkQuantityTexts(o); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkTemplates(o); err != nil {
			errs = append(errs, err)
			continue
		}
		sts, w, err := convert(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		warns = append(warns, w...)
		out = append(out, StatefulSet{StatefulSet: sts, Location: o.Location})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return out, warns, nil
}

// convert types a checked StatefulSet object the way the API server
// decodes a request body (strict JSON), so that a field of the wrong type
// is named by its path.
func convert(o Object) (*appsv1.StatefulSet, []Warning, error) {
	js, err := json.Marshal(o.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.describe(), err)
	}
	sts := &appsv1.StatefulSet{}
	strict, err := sigsjson.UnmarshalStrict(js, sts)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, nil, o.fieldError(pathOf(te.Field), te.Field, "a %s cannot be read as %s", te.Value, te.Type)
		}
		return nil, nil, fmt.Errorf("%s: %w", o.describe(), err)
	}
	var warns []Warning
	for _, e := range strict {
		// Unknown fields are not fatal (the API server may be newer than
		// this binary), but a misspelt volumeClaimTemplates would be checked
		// as no templates at all: say so.
		loc := o.Location
		if fe, ok := e.(sigsjson.FieldError); ok {
			loc = o.locate(pathOf(fe.FieldPath())...)
		}
		warns = append(warns, Warning{Location: loc, Message: fmt.Sprintf("StatefulSet %s/%s: %v", o.GetNamespace(), o.GetName(), e)})
	}
	if sts.Spec.Replicas == nil {
		one := int32(1)
		sts.Spec.Replicas = &one
		warns = append(warns, Warning{Location: o.locate("spec"), Message: fmt.Sprintf("StatefulSet %s/%s: spec.replicas is not set: the API server makes it 1 (an autoscaler may run more)", sts.Namespace, sts.Name)})
	}
	return sts, warns, nil
}

// pathOf splits a JSON field path such as "spec.containers[0].image" into
// the keys and indices locate takes.
func pathOf(field string) []any {
	var out []any
	for _, seg := range strings.Split(field, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			if n, err := strconv.Atoi(idx); err == nil {
				out = append(out, n)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}
