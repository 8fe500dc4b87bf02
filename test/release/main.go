// Command release builds claimwarden's release artifacts without Docker, ko or
// crane: go-containerregistry as a library assembles the image (a base made
// here of Debian's CA certificates and a nonroot passwd entry, plus the
// static binary), writes it as an OCI layout, pushes it, and serves a
// registry for tests; the SBOM is written from the binary's own build
// information; kubeconform's schemas are converted from the Kubernetes
// OpenAPI in the module cache; install.yaml is built with the kustomize API.
// One small program instead of four tools to build (crane, ko, kustomize and
// a schema converter), and no network at any step.
//
// It is a module of its own so go-containerregistry stays out of the
// controller's go.mod. Usage: release image|sbom|push|registry|schemas|kustomize -h.
package main

import (
	"flag"
	"fmt"
	"os"
)

var commands = map[string]func(args []string) error{
	"image":     imageCmd,
	"sbom":      sbomCmd,
	"push":      pushCmd,
	"registry":  registryCmd,
	"schemas":   schemasCmd,
	"kustomize": kustomizeCmd,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: release image|sbom|push|registry|schemas|kustomize [flags]")
		os.Exit(2)
	}
	if err := commands[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// required fails naming the first of the flags that is empty.
func required(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if fs.Lookup(n).Value.String() == "" {
			return fmt.Errorf("flag -%s is required", n)
		}
	}
	return nil
}
