package main

import (
	"flag"
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizeCmd prints `kustomize build DIR`: install.yaml without a kubectl
// (built by `make testenv` only) or a kustomize binary to build. The same
// kustomize API version as the controller's go.mod.
func kustomizeCmd(args []string) error {
	fs := flag.NewFlagSet("kustomize", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: release kustomize DIR")
	}
	opts := krusty.MakeDefaultOptions()
	// Namespaces and CRDs first, as kubectl kustomize orders them, so that
	// `kubectl apply -f install.yaml` creates them before what they hold.
	opts.Reorder = krusty.ReorderOptionLegacy
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), fs.Arg(0))
	if err != nil {
		return fmt.Errorf("kustomize %s: %w", fs.Arg(0), err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
