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
	var p Picker
	var out []StatefulSet
	for _, o := range objs {
		if s, ok := p.Pick(CandidateOf(o)); ok {
			out = append(out, s)
		}
	}
	warns, err := p.Result()
	if err != nil {
		return nil, nil, err
	}
	return out, warns, nil
}

// Candidate is what one object is to StatefulSets: a typed StatefulSet or
// the reason it is refused, or nothing (another kind). It is made from the
// object alone, so that the objects of a stream are typed on every core,
// and a Picker picks them in input order.
type Candidate struct {
	// key is "namespace/name" of a named StatefulSet, else "".
	key   string
	sts   *StatefulSet
	json  []byte
	warns []Warning
	err   error
}

// CandidateOf checks and types o when it is a StatefulSet, as StatefulSets
// does, but for a second definition, which only a Picker sees. A StatefulSet
// without a namespace gets DefaultNamespace (o is changed).
func CandidateOf(o Object) Candidate {
	if o.GetKind() != "StatefulSet" || o.GetAPIVersion() != "apps/v1" {
		if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "volumeClaimTemplates"); found {
			return Candidate{err: o.fieldError([]any{"spec", "volumeClaimTemplates"}, "spec.volumeClaimTemplates",
				"only a StatefulSet (apiVersion apps/v1) has volume claim templates claimwarden can check; this is apiVersion %q", o.GetAPIVersion())}
		}
		return Candidate{}
	}
	if o.GetName() == "" {
		return Candidate{err: fmt.Errorf("%s: metadata.name is not set", o.describe())}
	}
	if o.GetNamespace() == "" {
		o.SetNamespace(DefaultNamespace)
	}
	c := Candidate{key: o.GetNamespace() + "/" + o.GetName(), sts: &StatefulSet{Location: o.Location}}
	if c.err = checkQuantityTexts(o); c.err != nil {
		return c
	}
	if c.err = checkTemplates(o); c.err != nil {
		return c
	}
	c.sts.StatefulSet, c.json, c.warns, c.err = convert(o)
	return c
}

// Picker picks the StatefulSets out of the candidates of a stream, in
// input order, remembering where each was defined first and every problem.
// The zero value is ready to use.
type Picker struct {
	first map[string]Location
	warns []Warning
	errs  []error
}

// Pick returns c's StatefulSet unless c is another kind, is refused, or
// defines a StatefulSet a second time; the problems are the Result's.
func (p *Picker) Pick(c Candidate) (StatefulSet, bool) {
	if c.key != "" {
		if loc, dup := p.first[c.key]; dup {
			p.errs = append(p.errs, fmt.Errorf("StatefulSet %s is defined twice: %s and %s", c.key, loc, c.sts.Location))
			return StatefulSet{}, false
		}
		if p.first == nil {
			p.first = map[string]Location{}
		}
		p.first[c.key] = c.sts.Location
	}
	if c.err != nil {
		p.errs = append(p.errs, c.err)
		return StatefulSet{}, false
	}
	if c.sts == nil {
		return StatefulSet{}, false
	}
	p.warns = append(p.warns, c.warns...)
	return *c.sts, true
}

// Result is every problem of the candidates picked, one per line, or the
// warnings when there is none.
func (p *Picker) Result() ([]Warning, error) {
	if err := errors.Join(p.errs...); err != nil {
		return nil, err
	}
	return p.warns, nil
}

// convert types a checked StatefulSet object the way the API server
// decodes a request body (strict JSON), so that a field of the wrong type
// is named by its path.
func convert(o Object) (*appsv1.StatefulSet, []byte, []Warning, error) {
	js, err := json.Marshal(o.Object)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", o.describe(), err)
	}
	sts := &appsv1.StatefulSet{}
	strict, err := sigsjson.UnmarshalStrict(js, sts)
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, nil, nil, o.fieldError(pathOf(te.Field), te.Field, "a %s cannot be read as %s", te.Value, te.Type)
		}
		return nil, nil, nil, fmt.Errorf("%s: %w", o.describe(), err)
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
		defaultReplicas(sts)
		warns = append(warns, Warning{Location: o.locate("spec"), Message: fmt.Sprintf("StatefulSet %s/%s: spec.replicas is not set: the API server makes it 1 (an autoscaler may run more)", sts.Namespace, sts.Name)})
	}
	return sts, js, warns, nil
}

func defaultReplicas(sts *appsv1.StatefulSet) {
	if sts.Spec.Replicas == nil {
		one := int32(1)
		sts.Spec.Replicas = &one
	}
}

// JSON is the StatefulSet of c as the JSON it was typed from, nil when c
// has none: a few times smaller than the typed StatefulSet, for a caller
// that holds thousands and types each again (TypeAgain) when it needs it.
func (c Candidate) JSON() []byte { return c.json }

// TypeAgain types the JSON of a Candidate again, the same StatefulSet
// CandidateOf typed from it.
func TypeAgain(js []byte) (*appsv1.StatefulSet, error) {
	sts := &appsv1.StatefulSet{}
	// The strict errors were CandidateOf's warnings.
	if _, err := sigsjson.UnmarshalStrict(js, sts); err != nil {
		return nil, err
	}
	defaultReplicas(sts)
	return sts, nil
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
