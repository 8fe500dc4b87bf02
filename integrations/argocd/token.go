package argocd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretToken reads the token from a Secret at every use, so a rotated
// token is used from the next request on without a restart. Reader should be
// uncached (the manager's API reader): a cache would watch Secrets.
type SecretToken struct {
	Reader client.Reader
	Secret types.NamespacedName
	Key    string
}

// Token returns the Secret's value at Key, surrounding whitespace removed
// (a token written with a trailing newline).
func (s *SecretToken) Token(ctx context.Context) (string, error) {
	var sec corev1.Secret
	if err := s.Reader.Get(ctx, s.Secret, &sec); err != nil {
		return "", fmt.Errorf("argocd token: Secret %s: %w", s.Secret, err)
	}
	tok := strings.TrimSpace(string(sec.Data[s.Key]))
	if tok == "" {
		return "", fmt.Errorf("argocd token: Secret %s has no value at key %q", s.Secret, s.Key)
	}
	return tok, nil
}
