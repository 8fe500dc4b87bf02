package proposal

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

func proposalOf(ns, name, owner, rev string) Proposal {
	return Proposal{
		StatefulSet: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
		Source:      v1alpha1.Source{Kind: "Kustomization", Namespace: "flux-system", Name: owner, Revision: rev},
	}
}

// drain returns the keys of the events waiting in the store.
func drain(s *Store) []string {
	var out []string
	for {
		select {
		case e := <-s.Events():
			out = append(out, e.Object.GetNamespace()+"/"+e.Object.GetName())
		default:
			return out
		}
	}
}

func TestStoreNewestWinsAndNotifies(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	s.Set(ctx, proposalOf("shop", "db", "apps", "main@sha1:1"))
	s.Set(ctx, proposalOf("shop", "db", "apps", "main@sha1:2"))
	p, ok := s.Get(types.NamespacedName{Namespace: "shop", Name: "db"})
	if !ok || p.Source.Revision != "main@sha1:2" {
		t.Fatalf("Get = %+v, %v; want revision 2", p.Source, ok)
	}
	if got := drain(s); len(got) != 2 || got[0] != "shop/db" {
		t.Errorf("events = %v, want two for shop/db", got)
	}
}

func TestStoreDeleteOnlyByOwner(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	s.Set(ctx, proposalOf("shop", "db", "apps", "r1"))
	key := types.NamespacedName{Namespace: "shop", Name: "db"}
	drain(s)
	s.Delete(ctx, Owner{Kind: "Kustomization", Namespace: "flux-system", Name: "other"}, key)
	if _, ok := s.Get(key); !ok {
		t.Fatal("another owner deleted the proposal")
	}
	s.Delete(ctx, Owner{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, key)
	if _, ok := s.Get(key); ok {
		t.Fatal("the owner's delete left the proposal")
	}
	if got := drain(s); len(got) != 2 {
		t.Errorf("events = %v, want one per delete that found a proposal", got)
	}
}

func TestStoreSourceError(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	s.Set(ctx, proposalOf("shop", "db", "apps", "r1"))
	s.Set(ctx, proposalOf("shop", "cache", "apps", "r1"))
	s.Set(ctx, proposalOf("shop", "queue", "infra", "r1"))
	drain(s)
	owner := Owner{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}
	if got := s.Owned(owner); len(got) != 2 || got[0].Name != "cache" || got[1].Name != "db" {
		t.Fatalf("Owned = %v", got)
	}
	s.SetSourceError(ctx, owner, "fetch failed")
	s.SetSourceError(ctx, owner, "fetch failed") // unchanged: no events
	if got := drain(s); len(got) != 2 {
		t.Errorf("events = %v, want one per owned proposal", got)
	}
	if p, _ := s.Get(types.NamespacedName{Namespace: "shop", Name: "queue"}); p.SourceError != "" {
		t.Errorf("another owner's proposal got the error %q", p.SourceError)
	}
	if p, _ := s.Get(types.NamespacedName{Namespace: "shop", Name: "db"}); p.SourceError != "fetch failed" {
		t.Errorf("SourceError = %q", p.SourceError)
	}
}

// A round is stored at once and read back by owner, sorted; rounds grow.
func TestStoreRounds(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	first, second := s.NextRound(), s.NextRound()
	if first == 0 || second <= first {
		t.Fatalf("rounds %d then %d, want growing from 1", first, second)
	}
	db, cache := proposalOf("shop", "db", "apps", "r1"), proposalOf("shop", "cache", "apps", "r1")
	db.Round, cache.Round = second, second
	db.Source.Repository = "https://token@git.example.com/o/r.git"
	s.SetAll(ctx, []Proposal{db, cache})
	s.Set(ctx, proposalOf("shop", "queue", "infra", "r1"))
	if got := drain(s); len(got) != 3 {
		t.Errorf("events = %v, want one per proposal", got)
	}
	got := s.Of(Owner{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"})
	if len(got) != 2 || got[0].Key().Name != "cache" || got[1].Key().Name != "db" || got[0].Round != second || got[1].Round != second {
		t.Fatalf("Of = %+v, want cache and db of round %d", got, second)
	}
	if r := got[1].Source.Repository; r != "https://git.example.com/o/r.git" {
		t.Errorf("repository stored as %q, want it without user information", r)
	}
}
