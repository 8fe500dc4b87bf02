package check

import (
	"maps"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Cost is what a proposal does to the requests of a StatefulSet's claims
// (or of all of them, in the report) and to their monthly cost, as the
// prices of the policy parameters say.
type Cost struct {
	// CapacityFrom and CapacityTo are the claims' requests summed, now and
	// as proposed (new claims included), as quantities and in bytes.
	CapacityFrom      string `json:"capacityFrom"`
	CapacityTo        string `json:"capacityTo"`
	CapacityFromBytes int64  `json:"capacityFromBytes"`
	CapacityToBytes   int64  `json:"capacityToBytes"`
	// MonthlyFrom, MonthlyTo and MonthlyDelta are in the prices' currency,
	// rounded to cents.
	MonthlyFrom  float64 `json:"monthlyFrom"`
	MonthlyTo    float64 `json:"monthlyTo"`
	MonthlyDelta float64 `json:"monthlyDelta"`
	// Unpriced names the StorageClasses without a price: their claims
	// count in the capacity, not in the cost.
	Unpriced []string `json:"unpriced,omitempty"`
}

// pricedClaim is a claim as the bill sees it.
type pricedClaim struct {
	bytes      int64
	class, vac string
}

// costOf is the cost of going from the claims before to those after; nil
// when nothing changes.
func (p Prices) costOf(before, after []pricedClaim) *Cost {
	unpriced := map[string]bool{}
	sum := func(claims []pricedClaim) (int64, float64) {
		var bytes int64
		var money float64
		for _, c := range claims {
			bytes += c.bytes
			price, ok := p.perGiB(c.class, c.vac)
			if !ok {
				unpriced[c.class] = true
				continue
			}
			money += float64(c.bytes) / gib * price
		}
		return bytes, money
	}
	fromBytes, from := sum(before)
	toBytes, to := sum(after)
	if fromBytes == toBytes && cents(from) == cents(to) {
		return nil
	}
	return &Cost{
		CapacityFrom: quantity(fromBytes), CapacityTo: quantity(toBytes),
		CapacityFromBytes: fromBytes, CapacityToBytes: toBytes,
		MonthlyFrom: cents(from), MonthlyTo: cents(to), MonthlyDelta: cents(cents(to) - cents(from)),
		Unpriced: slices.Sorted(maps.Keys(unpriced)),
	}
}

const gib = 1 << 30

// cents rounds an amount to cents, as it is shown.
func cents(x float64) float64 { return math.Round(x*100) / 100 }

func quantity(bytes int64) string { return resource.NewQuantity(bytes, resource.BinarySI).String() }

// totalCost sums the costs of the StatefulSets; nil when none has one.
func totalCost(sets []StatefulSet) *Cost {
	var total *Cost
	unpriced := map[string]bool{}
	for _, st := range sets {
		c := st.Cost
		if c == nil {
			continue
		}
		if total == nil {
			total = &Cost{}
		}
		total.CapacityFromBytes += c.CapacityFromBytes
		total.CapacityToBytes += c.CapacityToBytes
		total.MonthlyFrom += c.MonthlyFrom
		total.MonthlyTo += c.MonthlyTo
		for _, u := range c.Unpriced {
			unpriced[u] = true
		}
	}
	if total == nil {
		return nil
	}
	total.CapacityFrom, total.CapacityTo = quantity(total.CapacityFromBytes), quantity(total.CapacityToBytes)
	total.MonthlyFrom, total.MonthlyTo = cents(total.MonthlyFrom), cents(total.MonthlyTo)
	total.MonthlyDelta = cents(total.MonthlyTo - total.MonthlyFrom)
	total.Unpriced = slices.Sorted(maps.Keys(unpriced))
	return total
}
