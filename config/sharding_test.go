package config

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestShardingSelectsItsToolObjects(t *testing.T) {
	keyed, unkeyed, other := labels.Set{ShardLabel: "eu"}, labels.Set{}, labels.Set{ShardLabel: "us"}
	for _, c := range []struct {
		name      string
		s         Sharding
		selects   []labels.Set
		leaves    []labels.Set
		orphaned  map[string]bool // key → reported
		validates string          // part of the error; "" when valid
	}{
		{name: "no sharding", s: Sharding{}, selects: []labels.Set{keyed, unkeyed, other}},
		{name: "a keyed instance", s: Sharding{Key: "eu"}, selects: []labels.Set{keyed}, leaves: []labels.Set{unkeyed, other}},
		{name: "the instance without a key", s: Sharding{Shards: []string{"eu"}}, selects: []labels.Set{unkeyed}, leaves: []labels.Set{keyed, other},
			orphaned: map[string]bool{"eu": false, "us": true}},
		{name: "both", s: Sharding{Key: "eu", Shards: []string{"us"}}, validates: "only the instance without a key lists the others"},
		{name: "not a label value", s: Sharding{Key: "eu west"}, validates: "sharding.key"},
		{name: "an empty shard", s: Sharding{Shards: []string{""}}, validates: "sharding.shards[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var errs []string
			c.s.validate(func(key string, _ any, format string, args ...any) { errs = append(errs, key+": "+format) })
			if c.validates != "" {
				if !strings.Contains(strings.Join(errs, "\n"), c.validates) {
					t.Errorf("validation %q, want one saying %q", errs, c.validates)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("validation %q", errs)
			}
			for _, l := range c.selects {
				if !c.s.Selector().Matches(l) {
					t.Errorf("%v not selected", l)
				}
			}
			for _, l := range c.leaves {
				if c.s.Selector().Matches(l) {
					t.Errorf("%v selected", l)
				}
			}
			for key, want := range c.orphaned {
				if _, got := c.s.Orphaned(map[string]string{ShardLabel: key}); got != want {
					t.Errorf("key %s orphaned %v, want %v", key, got, want)
				}
			}
		})
	}
}

// Each shard elects its own leader unless told otherwise.
func TestEachShardHasItsLease(t *testing.T) {
	c := Default()
	if got := c.LeaseID(); got != DefaultLeaderElectionID {
		t.Errorf("lease %s without sharding", got)
	}
	c.Sharding.Key = "eu"
	if got := c.LeaseID(); got != DefaultLeaderElectionID+"-eu" {
		t.Errorf("lease %s of shard eu, want the default and the key", got)
	}
	c.LeaderElection.ID = "mine"
	if got := c.LeaseID(); got != "mine" {
		t.Errorf("lease %s, want leaderElection.id as set", got)
	}
}
