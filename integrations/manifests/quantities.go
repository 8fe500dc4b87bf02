package manifests

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/claimwarden/claimwarden/reconciler/diff"
)

// Bounds of a quantity's text, checked before it is parsed: the parser and
// exact comparisons expand a decimal exponent digit by digit, so that
// "1E-99999999" takes 43 s to parse and "1E99999999" 38 s to compare. A
// thousand digits either way is far beyond any quantity Kubernetes can
// count (int64) and costs microseconds.
const (
	maxQuantityText     = 1024
	maxQuantityExponent = 1000
)

// quantityLists are the keys whose values are lists of quantities
// (corev1.ResourceList) in a StatefulSet: resources, Pod overhead and a
// claim's status; quantityFields the keys of single quantities (emptyDir
// sizeLimit, downward API divisor).
var (
	quantityLists  = []string{"limits", "requests", "capacity", "allocatedResources", "overhead"}
	quantityFields = []string{"sizeLimit", "divisor"}
)

// checkQuantityTexts bounds the text of every quantity of an object before
// it is typed, which parses them all. It goes by key, so that a string that
// merely looks like a number elsewhere (an environment variable) is left
// alone.
func checkQuantityTexts(o Object) error {
	if quantitiesBounded(o.Object) {
		return nil
	}
	var errs []error
	var walk func(v any, path []any, field string)
	check := func(v any, path []any, field string) {
		if err := boundedQuantity(v); err != nil {
			errs = append(errs, o.fieldError(path, field, "%s", err))
		}
	}
	walk = func(v any, path []any, field string) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				p, f := append(slices.Clip(path), k), strings.TrimPrefix(field+"."+k, ".")
				switch list, isList := x[k].(map[string]any); {
				case isList && slices.Contains(quantityLists, k):
					for _, name := range slices.Sorted(maps.Keys(list)) {
						check(list[name], append(slices.Clip(p), name), f+"."+name)
					}
				case slices.Contains(quantityFields, k):
					check(x[k], p, f)
				default:
					walk(x[k], p, f)
				}
			}
		case []any:
			for i, e := range x {
				walk(e, append(slices.Clip(path), i), fmt.Sprintf("%s[%d]", field, i))
			}
		}
	}
	walk(o.Object, nil, "")
	return errors.Join(errs...)
}

// quantitiesBounded is the walk of checkQuantityTexts without the paths
// and field names its errors need: few objects have a quantity to refuse,
// and naming every field on the way costs more than the check itself.
func quantitiesBounded(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch list, isList := e.(map[string]any); {
			case isList && slices.Contains(quantityLists, k):
				for _, q := range list {
					if boundedQuantity(q) != nil {
						return false
					}
				}
			case slices.Contains(quantityFields, k):
				if boundedQuantity(e) != nil {
					return false
				}
			default:
				if !quantitiesBounded(e) {
					return false
				}
			}
		}
	case []any:
		for _, e := range x {
			if !quantitiesBounded(e) {
				return false
			}
		}
	}
	return true
}

// checkQuantity parses a quantity as the API server would, its text bounded
// first; a storage size must also be one the diff can count in bytes
// (diff.Bytes: above zero, below 8Ei), which is the check every other path
// to the diff makes too.
func checkQuantity(v any, size bool) error {
	if err := boundedQuantity(v); err != nil {
		return err
	}
	text := quantityText(v)
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return fmt.Errorf("%q: %w", text, err)
	}
	if !size {
		return nil
	}
	if _, err := diff.Bytes(q); err != nil {
		// diff.Bytes describes the value; the text is what was written.
		_, why, _ := strings.Cut(err.Error(), ": ")
		return fmt.Errorf("%q: %s", text, why)
	}
	return nil
}

// boundedQuantity refuses a quantity's text that is too long or has an
// absurd decimal exponent. The exponent is found by hand because the
// library only reads it while parsing, which is what must be avoided: the
// grammar ends a quantity with "e" or "E" and a signed integer (a bare "E"
// is exa, "Ei" exbi).
func boundedQuantity(v any) error {
	text := quantityText(v)
	switch {
	case text == "":
		return fmt.Errorf("is a %T, not a quantity such as 10Gi", v)
	case len(text) > maxQuantityText:
		return fmt.Errorf("is %d characters long, more than any quantity (%d)", len(text), maxQuantityText)
	}
	i := strings.LastIndexAny(text, "eE")
	if i < 0 {
		return nil
	}
	exp := text[i+1:]
	n, err := strconv.ParseInt(exp, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange), err == nil && (n > maxQuantityExponent || n < -maxQuantityExponent):
		return fmt.Errorf("%q: the exponent %s is beyond ±%d", text, strings.TrimPrefix(exp, "+"), maxQuantityExponent)
	}
	return nil
}

// quantityText is a quantity as YAML or JSON wrote it, or "" for a value
// that cannot be one.
func quantityText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}
