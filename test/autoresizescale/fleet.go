package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/claimwarden/claimwarden/integrations/flux"
	"github.com/claimwarden/claimwarden/integrations/manifests"
	"github.com/claimwarden/claimwarden/test/benchkit"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/fluxenv"
)

const (
	// storageClass is the simulator's class.
	storageClass = "autoresizescale-sim"
	// claimSize is every template's size.
	claimSize = "1Gi"
	// fluxNamespace holds the GitRepositories and Kustomizations.
	fluxNamespace = "flux-system"
)

// member is one StatefulSet of the fleet and where Git holds it.
type member struct {
	key  types.NamespacedName
	repo string
}

func namespaceName(i int) string  { return fmt.Sprintf("tenant-%02d", i) }
func repositoryName(i int) string { return fmt.Sprintf("fleet-%02d", i) }

// statefulSet is StatefulSet ns/name with one replica and claims templates
// of claimSize: data, then log-1, log-2...; labelled as kustomize-controller
// labels what Kustomization fluxNamespace/ns applies.
func statefulSet(ns, name string, claims int) *appsv1.StatefulSet {
	sts := fixtures.StatefulSet(ns, name, 1, storageClass, claimSize)
	sts.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}
	for i := 1; i < claims; i++ {
		t := *sts.Spec.VolumeClaimTemplates[0].DeepCopy()
		t.Name = fmt.Sprintf("log-%d", i)
		sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, t)
	}
	sts.Labels[flux.LabelKustomizationName] = ns
	sts.Labels[flux.LabelKustomizationNamespace] = fluxNamespace
	return sts
}

// createFleet creates the repositories (each namespace's manifests in a
// directory of its repository), the GitRepositories and Kustomizations
// (their inventories naming the StatefulSets), the namespaces and the
// StatefulSets, and waits until every Pod is Ready and every claim Bound.
func (b *bench) createFleet(ctx context.Context) error {
	o := b.o
	files := map[string]map[string]string{} // repository → path → manifest
	var sets []*appsv1.StatefulSet
	for i := range o.statefulSets {
		ns := namespaceName(i % o.namespaces)
		repo := repositoryName(i % o.namespaces % o.repositories)
		sts := statefulSet(ns, fmt.Sprintf("db-%04d", i), o.claims)
		sets = append(sets, sts)
		b.fleet = append(b.fleet, member{key: types.NamespacedName{Namespace: ns, Name: sts.Name}, repo: repo})
		doc, err := yaml.Marshal(sts)
		if err != nil {
			return err
		}
		if files[repo] == nil {
			files[repo] = map[string]string{}
		}
		path := ns + "/statefulsets.yaml"
		files[repo][path] += "---\n" + string(doc)
	}
	for i := range o.repositories {
		repo := repositoryName(i)
		if _, err := b.git.CreateRepo(ctx, repo); err != nil {
			return fmt.Errorf("repository %s: %w", repo, err)
		}
		if _, err := b.git.PushCommit(ctx, repo, files[repo], "the fleet"); err != nil {
			return fmt.Errorf("repository %s: %w", repo, err)
		}
		url := b.proxy.url + "/" + b.git.User + "/" + repo + ".git"
		if err := b.c.Create(ctx, fluxenv.GitRepository(fluxNamespace, repo, url, time.Hour)); err != nil {
			return err
		}
	}
	for i := range o.namespaces {
		if err := fixtures.Namespace(ctx, b.c, namespaceName(i)); err != nil {
			return err
		}
	}
	inventories := map[string]*kustomizev1.ResourceInventory{}
	for _, sts := range sets {
		if err := b.c.Create(ctx, sts); err != nil {
			return fmt.Errorf("StatefulSet %s/%s: %w", sts.Namespace, sts.Name, err)
		}
		inv := inventories[sts.Namespace]
		if inv == nil {
			inv = &kustomizev1.ResourceInventory{}
			inventories[sts.Namespace] = inv
		}
		inv.Entries = append(inv.Entries, kustomizev1.ResourceRef{
			ID: manifests.InventoryID(sts.Namespace, sts.Name, schema.GroupKind{Group: "apps", Kind: "StatefulSet"}), Version: "v1",
		})
	}
	for i := range o.namespaces {
		ns := namespaceName(i)
		ks := fluxenv.Kustomization(fluxNamespace, ns, repositoryName(i%o.repositories), "./"+ns)
		ks.Spec.TargetNamespace = ns
		if err := b.c.Create(ctx, ks); err != nil {
			return err
		}
		ks.Status.Inventory = inventories[ns]
		if err := b.c.Status().Update(ctx, ks); err != nil {
			return fmt.Errorf("the inventory of Kustomization %s: %w", ns, err)
		}
	}
	return b.waitFleet(ctx)
}

// waitFleet waits until every Pod is Ready and every claim Bound.
func (b *bench) waitFleet(ctx context.Context) error {
	wantPods, wantClaims := b.o.statefulSets, b.o.statefulSets*b.o.claims
	var ready, bound int
	err := wait.PollUntilContextTimeout(ctx, 5*time.Second, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		if ready, bound, err = benchkit.Settled(ctx, b.c, func(ns string) bool { return strings.HasPrefix(ns, "tenant-") }); err != nil {
			return false, err
		}
		b.progress("%d/%d Pods Ready, %d/%d claims Bound", ready, wantPods, bound, wantClaims)
		return ready == wantPods && bound == wantClaims, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d Pods Ready and %d claims Bound (%d, %d): %w", wantPods, wantClaims, ready, bound, err)
	}
	return nil
}
