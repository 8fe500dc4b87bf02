// Command claimwarden brings StatefulSet PersistentVolumeClaims to their
// volumeClaimTemplates (KEP-4650). See package app for its subcommands.
package main

import (
	"os"

	"github.com/claimwarden/claimwarden/cmd/claimwarden/app"
	"github.com/claimwarden/claimwarden/integrations/sandbox"
)

func main() {
	// Started as a sandbox child (a chart to render), the binary does that
	// job under its bounds and exits here.
	sandbox.Main()
	os.Exit(app.Main(os.Args[1:]))
}
