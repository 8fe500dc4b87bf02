package diff

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FuzzBytes: a size Bytes accepts is the least whole number of bytes at or
// above the quantity, above zero and below 8Ei (MaxInt64, where binary
// sizes saturate); a size it refuses is zero or less, or rounds up to 8Ei
// or more; its messages stay short whatever the exponent.
func FuzzBytes(f *testing.F) {
	for _, s := range []string{
		"10Gi", "10737418239.5", "1", "0.1", "1m", "0", "-1", "1E99999999", "-1E99999999", "1e-99999999",
		"8Ei", "9Ei", overInt64, "9223372036854775807", "9223372036854775806.5", "9223372036854775806", "7.9Ei", "1e18",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 || absurdExponent(s) {
			return // manifests refuses these before they reach the diff
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return
		}
		n, err := Bytes(q)
		f := q.AsApproximateFloat64()
		if err != nil {
			if len(err.Error()) > 200 {
				t.Fatalf("Bytes(%s): a message of %d bytes", s, len(err.Error()))
			}
			if ordinary(f) && q.Sign() > 0 && q.CmpInt64(math.MaxInt64-1) <= 0 {
				t.Fatalf("Bytes(%s) refused a size between zero and 8Ei: %v", s, err)
			}
			return
		}
		if n <= 0 || n == math.MaxInt64 {
			t.Fatalf("Bytes(%s) = %d, not between zero and 8Ei", s, n)
		}
		if q.CmpInt64(n) > 0 || (n > 1 && q.CmpInt64(n-1) <= 0) {
			t.Fatalf("Bytes(%s) = %d, not the least whole number of bytes at or above it", s, n)
		}
	})
}

// FuzzOrdinals: Ordinals refuses exactly the StatefulSets whose ordinals
// or claims it cannot count: negative replicas or start, a last ordinal
// beyond MaxInt32, more claims than the limit.
func FuzzOrdinals(f *testing.F) {
	f.Add(int32(3), true, int32(0), false, uint8(1), 0)
	f.Add(int32(0), true, int32(5), true, uint8(0), 1)
	f.Add(int32(-1), true, int32(0), false, uint8(1), 0)
	f.Add(int32(1), false, int32(-1), true, uint8(1), 0)
	f.Add(int32(2), true, int32(math.MaxInt32), true, uint8(1), 0)
	f.Add(int32(math.MaxInt32), true, int32(1), true, uint8(255), math.MaxInt)
	f.Fuzz(func(t *testing.T, replicas int32, hasReplicas bool, start int32, hasOrdinals bool, templates uint8, maxClaims int) {
		sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: make([]corev1.PersistentVolumeClaim, templates)}}
		if hasReplicas {
			sts.Spec.Replicas = &replicas
		}
		if hasOrdinals {
			sts.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: start}
		}
		wantCount, wantStart := int64(1), int64(0)
		if hasReplicas {
			wantCount = int64(replicas)
		}
		if hasOrdinals {
			wantStart = int64(start)
		}
		limit := int64(maxClaims)
		if maxClaims < 1 {
			limit = DefaultMaxClaims
		}
		countable := wantCount >= 0 && wantStart >= 0 && wantStart+wantCount-1 <= math.MaxInt32 && int64(templates)*wantCount <= limit
		gotStart, gotCount, err := Ordinals(sts, maxClaims)
		if (err == nil) != countable {
			t.Fatalf("Ordinals(replicas %d, start %d, %d templates, limit %d) = %v, want countable %v", wantCount, wantStart, templates, limit, err, countable)
		}
		if err == nil && (int64(gotStart) != wantStart || int64(gotCount) != wantCount) {
			t.Fatalf("Ordinals = %d, %d, want %d, %d", gotStart, gotCount, wantStart, wantCount)
		}
	})
}

// absurdExponent reports a decimal exponent beyond ±1000, as manifests
// refuses it: ParseQuantity itself takes a minute over "1e-99999999".
func absurdExponent(s string) bool {
	i := strings.LastIndexAny(s, "eE")
	if i < 0 {
		return false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	if err != nil { // "Ei", a suffix; or an exponent beyond int
		return errors.Is(err, strconv.ErrRange)
	}
	return n > 1000 || n < -1000
}
