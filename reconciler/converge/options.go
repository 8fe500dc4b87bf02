package converge

import (
	"context"
	"time"

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
	// AdoptionNudgeAfter is how long a StatefulSet may go unadopted (see
	// unadopted), counted from its creation and from the last nudge, before
	// the Converger touches it so that the StatefulSet controller syncs it
	// again (v1alpha1.AdoptionNudgedAnnotation); default 10s. An adoption
	// takes that controller one sync, well under a second.
	AdoptionNudgeAfter time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Reader == nil {
		o.Reader = o.Client
	}
	if o.FieldOwner == "" {
		o.FieldOwner = DefaultFieldOwner
	}
	if o.AdoptionNudgeAfter <= 0 {
		o.AdoptionNudgeAfter = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
