package app

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/reconciler/proposal"
	"github.com/claimwarden/claimwarden/reconciler/source"
)

// toolSelect says which tool objects this instance handles (source.Options.Select);
// nil without sharding.
func toolSelect(s config.Sharding) func(client.Object) (bool, string) {
	if !s.Enabled() {
		return nil
	}
	selector := s.Selector()
	return func(obj client.Object) (bool, string) {
		if selector.Matches(labels.Set(obj.GetLabels())) {
			return true, ""
		}
		if key, ok := s.Orphaned(obj.GetLabels()); ok {
			return false, fmt.Sprintf("no claimwarden instance handles shard %q (label %s): the instances' keys are %v", key, config.ShardLabel, s.Shards)
		}
		return false, ""
	}
}

// shardOf decides which StatefulSets of one cluster this instance rolls
// out (rollout.Options.Shard): those its own tool objects proposed, and
// of the others, those whose tool object is in its shard: the one that
// proposed it last (its VolumeClaimRollout names it) or, at rest, the one
// that applies it; one no tool object applies is the instance's without
// a key. Tool objects are read on the hub (hub), the StatefulSet and its
// rollout in the cluster (cluster), which claimwarden names name ("" its
// own).
type shardOf struct {
	selector     labels.Selector
	tools        *source.Registry
	proposals    *proposal.Store
	hub, cluster client.Reader
	name         string
}

// newShard is the rollout's Shard of cluster name; nil without sharding.
func newShard(s config.Sharding, tools *source.Registry, proposals *proposal.Store, hub, cluster client.Reader, name string) func(context.Context, types.NamespacedName) (bool, error) {
	if !s.Enabled() {
		return nil
	}
	return (&shardOf{selector: s.Selector(), tools: tools, proposals: proposals, hub: hub, cluster: cluster, name: name}).owns
}

func (s *shardOf) owns(ctx context.Context, key types.NamespacedName) (bool, error) {
	if s.proposals != nil {
		if _, ok := s.proposals.Get(key); ok {
			return true, nil
		}
	}
	var vcr v1alpha1.VolumeClaimRollout
	switch err := s.cluster.Get(ctx, key, &vcr); {
	case err != nil && !apierrors.IsNotFound(err):
		return false, err
	case err == nil && vcr.Status.Proposal != nil:
		obj, ok, err := s.tools.Object(ctx, s.hub, vcr.Status.Proposal.Source)
		if err != nil || ok {
			return err == nil && s.selector.Matches(labels.Set(obj.GetLabels())), err
		}
	}
	var live appsv1.StatefulSet
	switch err := s.cluster.Get(ctx, key, &live); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return false, err
	default:
		// A tool object named but not confirming applies nothing: the
		// StatefulSet is then no tool object's.
		if a, ok, err := s.tools.AppliedBy(ctx, s.hub, s.name, &live); err == nil && ok {
			return s.selector.Matches(labels.Set(a.Object.GetLabels())), nil
		}
	}
	return s.selector.Matches(labels.Set{}), nil
}
