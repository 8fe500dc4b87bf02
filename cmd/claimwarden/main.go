// Command claimwarden brings StatefulSet PersistentVolumeClaims to their
// volumeClaimTemplates (KEP-4650). See package app for its subcommands.
package main

import (
	"os"

	"github.com/claimwarden/claimwarden/cmd/claimwarden/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:]))
}
