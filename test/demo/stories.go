package main

import (
	"context"
)

// A story is what the demo tells once the control plane runs.
type story struct {
	title string
	// starting is step 1's title.
	starting string
	// real lists, after the control plane, the other real programs it starts.
	real string
	// setup starts what the story needs besides the control plane and the
	// storage simulator, and returns the controller's extra flags; nil when
	// it needs nothing else.
	setup func(ctx context.Context, cl *cluster, out *printer) ([]string, error)
	tell  func(ctx context.Context, cl *cluster, o options, out *printer) error
	// hints prints what else to look at under -keep; kubectl is the command
	// line that reaches the cluster.
	hints func(cl *cluster, kubectl string, out *printer)
}

// stories are the -story values.
var stories = map[string]story{
	"kubectl": {
		title:    "claimwarden demo: growing a StatefulSet's volumes without deleting its Pods",
		starting: "Starting a local control plane",
		tell:     tell,
	},
	"flux": {
		title:    "claimwarden demo with Flux: a commit grows a StatefulSet's volumes, Git gets the verdict",
		starting: "Starting a local control plane, Gitea, Flux and claimwarden",
		real:     ", Gitea, Flux's source-controller and kustomize-controller",
		setup:    startFlux,
		tell: func(ctx context.Context, cl *cluster, o options, out *printer) error {
			return tellGitOps(ctx, cl, o, fluxTool{}, out)
		},
		hints: fluxHints,
	},
	"helm": {
		title:    "claimwarden demo with a Flux HelmRelease: a chart bump grows a StatefulSet's volumes, Git gets the verdict",
		starting: "Starting a local control plane, Gitea, Flux and claimwarden",
		real:     ", Gitea, Flux's source-, kustomize- and helm-controller (Helm v4)",
		setup:    startHelm,
		tell: func(ctx context.Context, cl *cluster, o options, out *printer) error {
			return tellGitOps(ctx, cl, o, helmTool{}, out)
		},
		hints: helmHints,
	},
	"argocd": {
		title:    "claimwarden demo with Argo CD: a commit grows a StatefulSet's volumes, Git gets the verdict",
		starting: "Starting a local control plane, Gitea, Argo CD and claimwarden",
		real:     ", Gitea, Redis, Argo CD's repo-server, application-controller and server",
		setup:    startArgo,
		tell: func(ctx context.Context, cl *cluster, o options, out *printer) error {
			return tellGitOps(ctx, cl, o, argoTool{}, out)
		},
		hints: argoHints,
	},
	"autoresize": {
		title:    "claimwarden demo, autoresize: a filling volume becomes a pull request, the merge grows it",
		starting: "Starting a local control plane, Gitea, Flux, Prometheus and claimwarden",
		real:     ", Gitea, Flux's source-controller and kustomize-controller, Prometheus",
		setup:    startAutoresize,
		tell:     tellAutoresize,
		hints:    autoresizeHints,
	},
}
