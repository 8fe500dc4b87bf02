package githost

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

// Credentials are tested here on what they resolve (HostFor);
// integrations/commitstatus's providers_test posts with them.

// credNoLeak fails the test when err reveals one of the secrets.
func credNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error %q reveals the credential %q", err, s)
		}
	}
}

// TestCredentialsRBAC: get, list and watch on Secrets in the referenced
// namespace are enough; without them the error says what is missing. Of
// what it may read, the cache holds the referenced keys only.
func TestCredentialsRBAC(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	admin, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const user = "system:serviceaccount:claimwarden-system:claimwarden"
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "git"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}},
		fixtures.Secret("git", "gitea", map[string]string{"token": "rbac-token", "unreferenced": "keep-out-of-memory"}),
		fixtures.Secret("git", "unrelated", map[string]string{"password": "not-ours"}),
		// A Secret in a namespace no reference names is not watched.
		fixtures.Secret("elsewhere", "not-watched", map[string]string{"token": "elsewhere-token"}),
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	const hostURL = "https://gitea.example.com"
	repo := Repository{Host: "gitea.example.com", Path: "owner/name", Owner: "owner", Name: "name"}
	hosts := []HostConfig{{URL: hostURL, Type: Gitea, Token: &SecretRef{Namespace: "git", Name: "gitea", Key: "token"}}}
	newCreds := func(cfg *rest.Config) *Credentials {
		c, err := NewCredentials(cfg, nil, hosts)
		if err != nil {
			t.Fatal(err)
		}
		c.wait = 3 * time.Second
		testenv.RunT(t, c)
		return c
	}

	t.Run("only referenced keys are held in memory", func(t *testing.T) {
		c := newCreds(env.Config)
		if _, err := c.HostFor(repo); err != nil {
			t.Fatal(err)
		}
		var s corev1.Secret
		if err := c.cache.Get(ctx, client.ObjectKey{Namespace: "git", Name: "gitea"}, &s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Data["token"]; !ok || len(s.Data) != 1 {
			t.Errorf("cached gitea Secret holds keys %v, want only token", slices.Sorted(maps.Keys(s.Data)))
		}
		if err := c.cache.Get(ctx, client.ObjectKey{Namespace: "git", Name: "unrelated"}, &s); err != nil {
			t.Fatal(err)
		}
		if len(s.Data) != 0 {
			t.Errorf("cached unrelated Secret holds keys %v, want none", slices.Sorted(maps.Keys(s.Data)))
		}
		err := c.cache.Get(ctx, client.ObjectKey{Namespace: "elsewhere", Name: "not-watched"}, &s)
		if err == nil {
			t.Error("a Secret of an unreferenced namespace was read: the cache watches more than the referenced namespaces")
		}
		credNoLeak(t, err, "elsewhere-token")
	})

	t.Run("forbidden", func(t *testing.T) {
		c := newCreds(env.ConfigFor(user))
		_, err := c.HostFor(repo)
		if err == nil {
			t.Fatal("HostFor succeeded without RBAC")
		}
		t.Log(err)
		for _, want := range []string{
			fmt.Sprintf(`git host %s: reading Secret git/gitea key "token": the Secrets of namespace git were not read within 3s: the controller needs get, list and watch on Secrets there`, hostURL),
			"forbidden",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error = %q\nwant it to contain %q", err, want)
			}
		}
	})

	t.Run("namespaced Role is enough", func(t *testing.T) {
		for _, o := range []client.Object{
			&rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Namespace: "git", Name: "git-status-credentials"},
				Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}},
			},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: "git", Name: "git-status-credentials"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "git-status-credentials"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "claimwarden-system", Name: "claimwarden"}},
			},
		} {
			if err := admin.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		c := newCreds(env.ConfigFor(user))
		testenv.EventuallyT(t, "the host with namespaced RBAC", 30*time.Second, func() error {
			h, err := c.HostFor(repo)
			if err == nil && h.Token != "rbac-token" {
				t.Errorf("token = %q, want the Secret's", h.Token)
			}
			return err
		})
	})
}

// TestCredentialsRejects: NewCredentials refuses hosts it could not serve,
// before reading anything.
func TestCredentialsRejects(t *testing.T) {
	cfg := &rest.Config{Host: "http://127.0.0.1:1"}
	tok := &SecretRef{Namespace: "git", Name: "t", Key: "token"}
	tests := []struct {
		name  string
		hosts []HostConfig
		want  string
	}{
		{"neither token nor app", []HostConfig{{URL: "https://github.com", Type: GitHub}},
			"git host https://github.com: set exactly one of a token and a GitHub App"},
		{"both", []HostConfig{{URL: "https://github.com", Type: GitHub, Token: tok, App: &AppConfig{AppID: 1, InstallationID: 2, PrivateKey: *tok}}},
			"git host https://github.com: set exactly one of a token and a GitHub App"},
		{"twice", []HostConfig{{URL: "https://github.com", Type: GitHub, Token: tok}, {URL: "https://github.com", Type: GitHub, Token: tok}},
			"git host https://github.com is configured twice"},
		{"no key", []HostConfig{{URL: "https://github.com", Type: GitHub, Token: &SecretRef{Namespace: "git", Name: "t"}}},
			`git host https://github.com: Secret git/t key "": namespace, name and key are all required`},
		{"type", []HostConfig{{URL: "https://github.com", Type: "gogs", Token: tok}},
			`git host https://github.com: type "gogs" is not one of github, gitlab, gitea, bitbucket-cloud, bitbucket-server`},
		{"URL with a password", []HostConfig{{URL: "https://user:hunter2@github.com", Type: GitHub, Token: tok}},
			`git host URL "https://xxxxx@github.com" holds user information: pass the token in Host.Token`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCredentials(cfg, nil, tt.hosts)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v\nwant    %q", err, tt.want)
			}
			credNoLeak(t, err, "hunter2")
		})
	}
}

// TestCredentialsWithoutHosts: no host means no Secret is watched (an empty
// namespace list would watch all of them) and every repository is refused.
func TestCredentialsWithoutHosts(t *testing.T) {
	c, err := NewCredentials(&rest.Config{Host: "http://127.0.0.1:1"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.cache != nil {
		t.Error("a Secret cache was made without any Secret reference")
	}
	testenv.RunT(t, c)
	if _, err := c.HostFor(Repository{Host: "github.com", Path: "o/n", Owner: "o", Name: "n"}); err == nil || !strings.Contains(err.Error(), "no Git host is configured for github.com") {
		t.Errorf("error = %v, want one saying github.com is not configured", err)
	}
}
