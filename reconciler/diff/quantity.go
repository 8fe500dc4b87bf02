package diff

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bytes is a storage size in whole bytes, rounded up as Quantity.Value
// rounds, which is what provisioners and resizers ask the storage for:
// "10737418239.5" is 10737418240 bytes, 10Gi. The diff compares sizes only
// in these bytes and the policies see these bytes, so over-sized, needs a
// patch and the policies' fromBytes/toBytes can never disagree.
//
// A size must be above zero and below math.MaxInt64 bytes (8Ei): Value
// wraps larger ones around ("18446744089815678976" counts as 15Gi), and
// binary ones saturate at math.MaxInt64 ("9Ei"), which then cannot be told
// from more. The error describes the value; callers name the field.
func Bytes(q resource.Quantity) (int64, error) {
	// Exact comparisons expand a quantity digit by digit: "1E99999999"
	// takes minutes to compare with anything. The float approximation
	// costs nothing whatever the exponent, so it screens first; only
	// sizes of ordinary magnitude are compared exactly.
	f := q.AsApproximateFloat64()
	switch {
	case q.Sign() <= 0:
		return 0, fmt.Errorf("%s: must be greater than zero", render(q, f))
	case !ordinary(f):
		return 0, fmt.Errorf("%s: is 8Ei or more, beyond the sizes Kubernetes can count in bytes", render(q, f))
	case f < 0.5:
		return 1, nil // above zero, below a byte: rounds up to one
	case q.CmpInt64(math.MaxInt64-1) > 0:
		// Above MaxInt64-1, a size rounds up to MaxInt64, where binary
		// sizes saturate: it could not be told from a larger one.
		return 0, fmt.Errorf("%s: is 8Ei or more, beyond the sizes Kubernetes can count in bytes", render(q, f))
	}
	return q.Value(), nil
}

// ordinary reports whether f, a quantity's approximation, is below 2^64 in
// magnitude: there exact comparisons and rendering are cheap.
func ordinary(f float64) bool {
	return !math.IsNaN(f) && math.Abs(f) < 0x1p64
}

// render is q for messages; rendering a quantity of a huge exponent can
// expand it like a comparison does, so those are only described.
func render(q resource.Quantity, f float64) string {
	switch {
	case math.Abs(f) < 1e30:
		return q.String()
	case f < 0:
		return "a size of less than -1e30"
	default:
		return "a size of more than 1e30"
	}
}
