// Package fluxenv runs the real Flux source-, kustomize- and helm-controller
// (v1.9.6 and v1.6.0, built by `make testenv` into bin/testenv) against a
// testenv control plane, out of cluster, for end-to-end tests of the GitOps loop:
//
//	env := testenv.StartT(t, testenv.Options{Kwok: true})
//	flux := fluxenv.StartT(t, env)
//	c, _ := client.New(env.Config, client.Options{Scheme: fluxenv.Scheme()})
//	_ = c.Create(ctx, fluxenv.GitRepository(flux.Namespace, "fleet", cloneURL, time.Minute))
//	ks := fluxenv.Kustomization(flux.Namespace, "fleet", "fleet", "./")
//	_ = c.Create(ctx, ks)
//	_ = fluxenv.WaitReady(ctx, c, ks)
//
// Start installs the Flux CRDs (bin/testenv/flux-crds), creates the runtime
// namespace and starts the controllers with testenv.StartProcess, so they get the
// same process handling as the control plane: their own process group, a
// parent-death signal, and a log file each (<Dir>/<controller>.log).
package fluxenv
