package autoresize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/integrations/usage"
)

// countedUsage answers every namespace with one claim, recording each read;
// batch says how a read of several namespaces goes.
type countedUsage struct {
	mu    sync.Mutex
	reads []string
	batch func(nss []string) error
}

func (u *countedUsage) Claims(_ context.Context, ns string, _ time.Time) (map[string]usage.Usage, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reads = append(u.reads, ns)
	return map[string]usage.Usage{"data-" + ns: {CapacityBytes: 1}}, nil
}

func (u *countedUsage) Namespaces(ctx context.Context, nss []string, _ time.Time) (map[string]map[string]usage.Usage, error) {
	u.mu.Lock()
	u.reads = append(u.reads, fmt.Sprint(nss))
	u.mu.Unlock()
	if err := u.batch(nss); err != nil {
		return nil, err
	}
	out := map[string]map[string]usage.Usage{}
	for _, ns := range nss[1:] { // the first has no claims reported
		out[ns] = map[string]usage.Usage{"data-" + ns: {CapacityBytes: 1}}
	}
	return out, nil
}

// A round reads its namespaces in batches of maxBatchNamespaces, once, by
// the first check that needs one of them; a batch read that fails, or
// does not answer within its wait, is given up on and each namespace of
// it is read on its own.
func TestRoundMemoReadsNamespacesInBatches(t *testing.T) {
	var nss []string
	for i := range maxBatchNamespaces + 2 {
		nss = append(nss, fmt.Sprintf("ns-%02d", i))
	}
	ctx := context.Background()
	hang := make(chan struct{})
	defer close(hang)
	for _, tc := range []struct {
		name  string
		batch func([]string) error
		want  []string // the reads, in order, of claims(ns-01), claims(ns-00), claims(ns-51)
	}{
		{"answered", func([]string) error { return nil },
			[]string{fmt.Sprint(nss[:maxBatchNamespaces]), fmt.Sprint(nss[maxBatchNamespaces:])}},
		{"failed", func([]string) error { return errors.New("too many series") },
			[]string{fmt.Sprint(nss[:maxBatchNamespaces]), "ns-01", "ns-00", fmt.Sprint(nss[maxBatchNamespaces:]), "ns-51"}},
		{"hung", func(batch []string) error {
			if slices.Contains(batch, "ns-00") {
				<-hang
			}
			return nil
		}, []string{fmt.Sprint(nss[:maxBatchNamespaces]), "ns-01", "ns-00", fmt.Sprint(nss[maxBatchNamespaces:])}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &countedUsage{batch: tc.batch}
			m := newRoundMemo(u, nss, 100*time.Millisecond)
			for _, ns := range []string{"ns-01", "ns-00", "ns-01", "ns-51"} {
				used, _, err := m.claims(ctx, ns)
				want := 1
				if ns == "ns-00" && tc.name != "failed" && tc.name != "hung" {
					want = 0 // its batch reported no claim of it
				}
				if err != nil || len(used) != want {
					t.Errorf("%s: %v, %v; want %d claims", ns, used, err, want)
				}
			}
			if tc.name == "answered" {
				// Late in a long round, past the wait: from the batch still.
				time.Sleep(150 * time.Millisecond)
				for range 20 {
					if _, _, err := m.claims(ctx, "ns-02"); err != nil {
						t.Fatal(err)
					}
				}
			}
			u.mu.Lock()
			defer u.mu.Unlock()
			if !slices.Equal(u.reads, tc.want) {
				t.Errorf("reads %q, want %q", u.reads, tc.want)
			}
		})
	}
}
