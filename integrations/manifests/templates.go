package manifests

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// checkTemplates checks the volume claim templates of a StatefulSet object
// before it is typed: the converter's errors name no field, and a template
// the diff cannot size must be refused where it was written.
func checkTemplates(o Object) error {
	raw := nested(o.Object, "spec", "volumeClaimTemplates")
	if raw == nil {
		return nil
	}
	templates, ok := raw.([]any)
	if !ok {
		return o.fieldError([]any{"spec", "volumeClaimTemplates"}, "spec.volumeClaimTemplates", "is a %T, not a list", raw)
	}
	var errs []error
	names := map[string]int{}
	for i, t := range templates {
		at := func(p ...any) []any { return append([]any{"spec", "volumeClaimTemplates", i}, p...) }
		field := fmt.Sprintf("spec.volumeClaimTemplates[%d]", i)
		tm, ok := t.(map[string]any)
		if !ok {
			errs = append(errs, o.fieldError(at(), field, "is not an object"))
			continue
		}
		rawName := nested(tm, "metadata", "name")
		name, isString := rawName.(string)
		switch first, dup := names[name]; {
		case rawName != nil && !isString:
			// YAML reads y, yes, on, 1 as other types: the name needs quotes.
			errs = append(errs, o.fieldError(at("metadata", "name"), field+".metadata.name", "%v is a %T, not a name: quote it", rawName, rawName))
		case name == "":
			errs = append(errs, o.fieldError(at("metadata", "name"), field+".metadata.name", "is not set"))
		case dup:
			errs = append(errs, o.fieldError(at("metadata", "name"), field+".metadata.name", "%q is also the name of spec.volumeClaimTemplates[%d]", name, first))
		default:
			names[name] = i
		}
		for _, list := range []string{"requests", "limits"} {
			values, _ := nested(tm, "spec", "resources", list).(map[string]any)
			for _, res := range slices.Sorted(maps.Keys(values)) {
				v := values[res]
				p := at("spec", "resources", list, res)
				f := fmt.Sprintf("%s.spec.resources.%s.%s", field, list, res)
				if err := checkQuantity(v, res == string(corev1.ResourceStorage)); err != nil {
					errs = append(errs, o.fieldError(p, f, "%s", err))
				}
			}
		}
		if nested(tm, "spec", "resources", "requests", string(corev1.ResourceStorage)) == nil {
			errs = append(errs, o.fieldError(at("spec", "resources"), field+".spec.resources.requests.storage", "is not set: a claim template needs a storage request"))
		}
	}
	return errors.Join(errs...)
}

// nested returns the value at path in nested maps, or nil.
func nested(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// fieldError is "Kind ns/name (file:line): field: message", the line being
// the field's own.
func (o Object) fieldError(path []any, field, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %s", o.describeAt(o.locate(path...)), field, fmt.Sprintf(format, args...))
}
