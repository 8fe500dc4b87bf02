// Package app is the claimwarden command line: `claimwarden run` starts the
// controller, `claimwarden check` checks proposed manifests against the
// policies, `claimwarden version` prints the version.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Exit codes of Main.
const (
	exitOK      = 0
	exitFailure = 1 // a command ran and failed
	exitUsage   = 2 // the command line was wrong; nothing ran
)

// Main runs the command line args (os.Args[1:]) and returns the exit code.
// SIGINT and SIGTERM cancel the running command.
func Main(args []string) int {
	return execute(ctrl.SetupSignalHandler(), args, os.Environ(), os.Stdout, os.Stderr)
}

// execute is Main with its inputs and outputs passed in, for tests.
func execute(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	root := newRootCommand(environ)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "claimwarden: %v\n", ee.err)
		return ee.code
	}
	fmt.Fprintf(stderr, "claimwarden: %v\n", err)
	if errors.As(err, new(failure)) {
		return exitFailure
	}
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

// failure marks an error returned by a command's own work. Every other error
// comes from cobra parsing the command line (unknown command or flag, bad flag
// value, extra arguments) and is a usage error.
type failure struct{ error }

func (f failure) Unwrap() error { return f.error }

// exitError ends a command with its own exit code, without the usage hint:
// `check` exits 1 for a denial and 2 for bad input.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

// runE adapts a command's work to cobra, marking its errors as failures.
func runE(f func(cmd *cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := f(cmd); err != nil {
			return failure{err}
		}
		return nil
	}
}

// newRootCommand builds the command tree; environ is the process environment,
// read for CLAIMWARDEN_* configuration.
func newRootCommand(environ []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "claimwarden",
		Short: "Bring StatefulSet PersistentVolumeClaims to their volumeClaimTemplates",
		Long: `claimwarden brings the PersistentVolumeClaims of StatefulSets to their
volumeClaimTemplates, the way KEP-4650 proposes: it patches what can be patched,
never shrinks a claim, never deletes one, and reports what it did.`,
		// execute prints errors once, in its own format, and usage only when it helps.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	// Shell completion is not part of the interface.
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newRunCommand(environ), newCheckCommand(environ), newVersionCommand())
	return root
}
