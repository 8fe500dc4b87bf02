package argocd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/reconciler/authority"
)

// serviceAccountDisallowed are the characters Argo CD refuses in a
// defaultServiceAccount (util/settings/impersonation.go).
const serviceAccountDisallowed = "!*[]{}\\/"

// errNoServiceAccount: impersonation is on and no destination service
// account of the project matches the Application's destination.
var errNoServiceAccount = errors.New("no destinationServiceAccounts entry of its AppProject matches its destination")

// impersonated mirrors settings.DeriveServiceAccountToImpersonate: the
// first destinationServiceAccounts entry, in list order, whose server glob
// matches the destination's server and whose namespace glob matches the
// destination namespace as written (possibly empty) names the account:
// "name" in the destination namespace (the Application's own when none),
// or "namespace:name". A pattern that does not compile is an error, as in
// Argo CD, and so is no match (errNoServiceAccount).
func impersonated(p projectSpec, d appDestination, server, appNamespace string) (*v1alpha1.Identity, error) {
	for _, item := range p.DestinationServiceAccounts {
		serverOK, err := strictMatch(item.Server, server)
		if err != nil {
			return nil, fmt.Errorf("destinationServiceAccounts server %q: %w", item.Server, err)
		}
		namespaceOK, err := strictMatch(item.Namespace, d.Namespace)
		if err != nil {
			return nil, fmt.Errorf("destinationServiceAccounts namespace %q: %w", item.Namespace, err)
		}
		if serverOK && namespaceOK {
			return serviceAccountIdentity(item.DefaultServiceAccount, d.Namespace, appNamespace)
		}
	}
	return nil, errNoServiceAccount
}

// serviceAccountIdentity is the identity of a defaultServiceAccount.
func serviceAccountIdentity(account, destNamespace, appNamespace string) (*v1alpha1.Identity, error) {
	if strings.TrimSpace(account) == "" || strings.ContainsAny(account, serviceAccountDisallowed) {
		return nil, fmt.Errorf("defaultServiceAccount %q is empty or has characters Argo CD refuses (%s)", account, serviceAccountDisallowed)
	}
	if ns, name, qualified := strings.Cut(account, ":"); qualified {
		// Argo CD prefixes "system:serviceaccount:" to the whole value; a
		// second colon would make a user no service account is.
		if ns == "" || name == "" || strings.Contains(name, ":") {
			return nil, fmt.Errorf("defaultServiceAccount %q is not <namespace>:<name>", account)
		}
		return authority.ServiceAccount(ns, name), nil
	}
	if destNamespace == "" {
		destNamespace = appNamespace
	}
	return authority.ServiceAccount(destNamespace, account), nil
}
