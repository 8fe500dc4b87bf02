package rollout

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/converge"
)

// JournalKeyField is the key of the journal key in its Secret.
const JournalKeyField = "key"

// LoadJournalKey returns the key that seals the crash journal, from the
// Secret secret, creating that Secret with a random key when it does not
// exist (the first start; replicas racing to create it all end up with the
// one that won). r must read from the API server, not from a cache: the
// controller watches no Secrets, and needs only get on this one and create.
// The Secret is immutable: a changed key would refuse every record sealed
// with the old one.
func LoadJournalKey(ctx context.Context, r client.Reader, w client.Writer, secret types.NamespacedName) ([]byte, error) {
	for range 2 {
		var s corev1.Secret
		err := r.Get(ctx, secret, &s)
		if err == nil {
			key := s.Data[JournalKeyField]
			if len(key) < converge.MinKeyLength {
				return nil, fmt.Errorf("journal key Secret %s: data.%s has %d bytes, want at least %d (delete the Secret to have a new key made)",
					secret, JournalKeyField, len(key), converge.MinKeyLength)
			}
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the journal key Secret %s: %w", secret, err)
		}
		key := make([]byte, converge.MinKeyLength)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("making a journal key: %w", err)
		}
		s = corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: secret.Namespace, Name: secret.Name,
				Labels: map[string]string{"app.kubernetes.io/name": "claimwarden"}},
			Type:      corev1.SecretTypeOpaque,
			Immutable: ptr.To(true),
			Data:      map[string][]byte{JournalKeyField: key},
		}
		err = w.Create(ctx, &s, client.FieldOwner(v1alpha1.ControllerName))
		if err == nil {
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating the journal key Secret %s: %w", secret, err)
		}
		// Another replica created it first: read that one.
	}
	return nil, fmt.Errorf("journal key Secret %s exists and vanished again", secret)
}

// journalKeys loads the journal key once it is first needed and keeps it:
// the Secret is immutable. A failure is returned and tried again next time.
type journalKeys struct {
	reader client.Reader
	writer client.Writer
	secret types.NamespacedName
	mu     sync.Mutex
	key    []byte
}

func (k *journalKeys) get(ctx context.Context) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == nil {
		key, err := LoadJournalKey(ctx, k.reader, k.writer, k.secret)
		if err != nil {
			return nil, err
		}
		k.key = key
	}
	return k.key, nil
}
