package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ShardLabel is the label a tool object's shard is read from: Flux's own
// (sharding.fluxcd.io/key), so that claimwarden's shards follow the Flux
// shards that apply the objects.
const ShardLabel = "sharding.fluxcd.io/key"

// DefaultLeaderElectionID is leaderElection.id's default.
const DefaultLeaderElectionID = "claimwarden.claimwarden.dev"

// LeaseID is the leader election Lease's name: leaderElection.id, and for
// a shard left with the default, the default and its key, so that each
// shard elects its own leader (two shards on one Lease would leave one
// shard's objects to nobody).
func (c Config) LeaseID() string {
	if c.Sharding.Key != "" && c.LeaderElection.ID == DefaultLeaderElectionID {
		return DefaultLeaderElectionID + "-" + c.Sharding.Key
	}
	return c.LeaderElection.ID
}

// Sharding splits the tool objects between several claimwarden instances,
// as Flux splits them between its controllers: each instance has its own
// leaderElection.id and handles the tool objects of its shard, and the
// StatefulSets they apply.
type Sharding struct {
	// Key is this instance's shard: it handles the tool objects labelled
	// sharding.fluxcd.io/key=<key>. Empty (the default): the tool objects
	// without the label, and the StatefulSets no tool object applies.
	Key string `mapstructure:"key"`

	// Shards are the keys the other instances handle, set on the instance
	// without a key: a tool object labelled with any other key is handled
	// by no instance, and this one reports it. Empty (the default) with no
	// Key: no sharding, every tool object is this instance's.
	Shards []string `mapstructure:"shards"`
}

// Enabled reports whether instances share the tool objects.
func (s Sharding) Enabled() bool { return s.Key != "" || len(s.Shards) > 0 }

// Selector is the label selector of this instance's tool objects:
// everything without sharding.
func (s Sharding) Selector() labels.Selector {
	switch {
	case s.Key != "":
		r, err := labels.NewRequirement(ShardLabel, selection.Equals, []string{s.Key})
		if err != nil {
			panic(err) // validated
		}
		return labels.NewSelector().Add(*r)
	case len(s.Shards) > 0:
		r, err := labels.NewRequirement(ShardLabel, selection.DoesNotExist, nil)
		if err != nil {
			panic(err) // a constant key
		}
		return labels.NewSelector().Add(*r)
	}
	return labels.Everything()
}

// Orphaned says whether a tool object's labels put it in a shard no
// instance handles: set only on the instance that reports them (no Key,
// Shards listed).
func (s Sharding) Orphaned(l map[string]string) (string, bool) {
	key, ok := l[ShardLabel]
	if s.Key != "" || len(s.Shards) == 0 || !ok {
		return "", false
	}
	for _, k := range s.Shards {
		if k == key {
			return "", false
		}
	}
	return key, true
}

func (s Sharding) validate(bad func(key string, value any, format string, args ...any)) {
	if s.Key != "" && len(s.Shards) > 0 {
		bad("sharding.shards", s.Shards, "is set with sharding.key %q: only the instance without a key lists the others", s.Key)
	}
	check := func(key, v string) {
		problems := validation.IsValidLabelValue(v)
		if v == "" {
			problems = append(problems, "must not be empty")
		}
		if len(problems) > 0 {
			bad(key, v, "is not a label value: %s", strings.Join(problems, "; "))
		}
	}
	if s.Key != "" {
		check("sharding.key", s.Key)
	}
	for i, k := range s.Shards {
		check(fmt.Sprintf("sharding.shards[%d]", i), k)
	}
}
