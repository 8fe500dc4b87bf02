package argocd

import (
	"errors"
	"strings"
	"testing"
)

func TestImpersonated(t *testing.T) {
	const local = "https://kubernetes.default.svc"
	shop := appDestination{Server: local, Namespace: "shop"}
	for _, tc := range []struct {
		name     string
		accounts []destinationServiceAccount
		dest     appDestination
		want     string // the user, or part of the error
	}{
		{"in the destination namespace", []destinationServiceAccount{{Server: local, Namespace: "shop", DefaultServiceAccount: "deployer"}}, shop, "system:serviceaccount:shop:deployer"},
		{"qualified", []destinationServiceAccount{{Server: "*", Namespace: "*", DefaultServiceAccount: "ops:deployer"}}, shop, "system:serviceaccount:ops:deployer"},
		{"the first match", []destinationServiceAccount{
			{Server: "https://prod.example", Namespace: "*", DefaultServiceAccount: "prod"},
			{Server: local, Namespace: "bank", DefaultServiceAccount: "bank"},
			{Server: "*", Namespace: "sh*", DefaultServiceAccount: "first"},
			{Server: "*", Namespace: "*", DefaultServiceAccount: "second"},
		}, shop, "system:serviceaccount:shop:first"},
		{"no destination namespace: the Application's", []destinationServiceAccount{{Server: "*", DefaultServiceAccount: "deployer"}}, appDestination{Server: local}, "system:serviceaccount:team-a:deployer"},
		{"no match", []destinationServiceAccount{{Server: local, Namespace: "bank", DefaultServiceAccount: "deployer"}}, shop, errNoServiceAccount.Error()},
		{"none", nil, shop, errNoServiceAccount.Error()},
		{"a pattern that does not compile", []destinationServiceAccount{{Server: local, Namespace: "[shop", DefaultServiceAccount: "deployer"}}, shop, `namespace "[shop"`},
		{"a wildcard account", []destinationServiceAccount{{Server: "*", Namespace: "*", DefaultServiceAccount: "*"}}, shop, "characters Argo CD refuses"},
		{"a blank account", []destinationServiceAccount{{Server: "*", Namespace: "*", DefaultServiceAccount: " "}}, shop, "is empty"},
		{"two colons", []destinationServiceAccount{{Server: "*", Namespace: "*", DefaultServiceAccount: "a:b:c"}}, shop, "is not <namespace>:<name>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := impersonated(projectSpec{DestinationServiceAccounts: tc.accounts}, tc.dest, local, "team-a")
			got := ""
			switch {
			case err != nil:
				got = err.Error()
			case id != nil:
				got = id.User
			}
			if !strings.Contains(got, tc.want) || (err == nil) != strings.HasPrefix(tc.want, "system:") {
				t.Errorf("impersonated(%+v, %+v) = %v, %v; want %q", tc.accounts, tc.dest, id, err, tc.want)
			}
		})
	}
	if _, err := impersonated(projectSpec{}, shop, local, "team-a"); !errors.Is(err, errNoServiceAccount) {
		t.Errorf("impersonated without accounts: %v, want errNoServiceAccount", err)
	}
}
