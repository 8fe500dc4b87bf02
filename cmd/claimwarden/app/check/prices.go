package check

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// The policy parameters (policies.params) holding prices: the same ones the
// max-cost-increase policy reads, so that check shows the costs the policy
// decides on.
const (
	storageClassPricesParam = "storage_class_prices"
	attributesPricesParam   = "volume_attributes_class_prices"
)

// Prices are monthly prices per GiB: of each StorageClass, plus a surcharge
// of each VolumeAttributesClass (0 when not listed). Empty: no costs shown.
type Prices struct {
	StorageClasses          map[string]float64
	VolumeAttributesClasses map[string]float64
}

// PricesFromParams reads the prices from the policy parameters; a malformed
// list is an error, since costs shown from half of it would mislead.
func PricesFromParams(params map[string]any) (Prices, error) {
	var p Prices
	var err error
	if p.StorageClasses, err = priceList(params, storageClassPricesParam); err != nil {
		return Prices{}, err
	}
	if p.VolumeAttributesClasses, err = priceList(params, attributesPricesParam); err != nil {
		return Prices{}, err
	}
	return p, nil
}

func priceList(params map[string]any, key string) (map[string]float64, error) {
	raw, ok := params[key]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("policy parameter %s must map class names to monthly prices per GiB, got %T", key, raw)
	}
	out := make(map[string]float64, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		f, ok := number(m[name])
		if !ok || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("policy parameter %s.%s must be a price ≥ 0, got %v", key, name, m[name])
		}
		out[name] = f
	}
	return out, nil
}

// number is v as a float64, for the number types YAML and JSON decoders give.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

// configured reports whether any price is known: without, check shows no cost.
func (p Prices) configured() bool { return len(p.StorageClasses) > 0 }

// perGiB is the monthly price per GiB of a claim of class and attributes
// class vac; false when the class has no price.
func (p Prices) perGiB(class, vac string) (float64, bool) {
	price, ok := p.StorageClasses[class]
	return price + p.VolumeAttributesClasses[vac], ok
}
