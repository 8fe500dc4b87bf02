package app

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is the release of the binary, set when building with
// -ldflags "-X github.com/claimwarden/claimwarden/cmd/claimwarden/app.Version=v1.2.3"
// (see the Makefile's build target).
var Version string

// version is Version, else the module version that `go install ...@v1.2.3`
// records in the binary, else "dev".
func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of claimwarden and of Go it was built with",
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "claimwarden %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		}),
	}
}
