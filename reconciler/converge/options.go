package converge

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
)

// DefaultFieldOwner is the field manager of a Converger's writes unless
// Options.FieldOwner says otherwise.
const DefaultFieldOwner = v1alpha1.ControllerName

// Options configure a Converger. Client, Journal and JournalKey are required.
type Options struct {
	Client  client.Client
	Journal Journal
	// JournalKey returns the key that seals every record written and opens
	// every record read (Record): at least MinKeyLength bytes, kept where the
	// Journal's writers cannot read it. It is asked only when a record is
	// written or found, so a controller starts without it.
	JournalKey func(ctx context.Context) ([]byte, error)
	// Reader serves every read; defaults to Client. Pass the manager's API
	// reader: a cache lags, and the decisions here (is the old object gone, who
	// created the new one) must be made on the server's current state; a cache
	// that strips managedFields would also hide that we created an object.
	Reader client.Reader
	// FieldOwner is the field manager of our writes; default DefaultFieldOwner.
	// It also identifies the object we created when a crash hid the outcome
	// of our own create.
	FieldOwner string
}

func (o Options) withDefaults() Options {
	if o.Reader == nil {
		o.Reader = o.Client
	}
	if o.FieldOwner == "" {
		o.FieldOwner = DefaultFieldOwner
	}
	return o
}
