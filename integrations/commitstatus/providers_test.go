package commitstatus

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/integrations/githost"
	"github.com/claimwarden/claimwarden/test/fixtures"
	"github.com/claimwarden/claimwarden/test/testenv"
)

const credSHA = "0123456789abcdef0123456789abcdef01234567"

// credServer is a Git host that accepts every request and records its
// method, path and Authorization header.
type credServer struct {
	*httptest.Server
	mu    sync.Mutex
	seen  []string // "POST /path Authorization"
	extra http.HandlerFunc
}

func newCredServer(t *testing.T, extra http.HandlerFunc) *credServer {
	s := &credServer{extra: extra}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		s.mu.Unlock()
		if s.extra != nil && strings.Contains(r.URL.Path, "/app/installations/") {
			s.extra(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id": 1, "state": "pending", "context": "claimwarden/shop/web"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// last returns the last request seen.
func (s *credServer) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return ""
	}
	return s.seen[len(s.seen)-1]
}

// credRepoOn is the repository owner/name on s's host.
func credRepoOn(t *testing.T, s *credServer) githost.Repository {
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	return githost.Repository{Host: u.Host, Path: "owner/name", Owner: "owner", Name: "name"}
}

// credPost resolves repo's provider through p and posts a status with it.
func credPost(providers *Providers, repo githost.Repository) error {
	p, err := providers.ProviderFor(repo)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.Post(ctx, repo, credSHA, Status{State: Pending, Context: "claimwarden/shop/web", Description: "Rolling out"})
}

// credNoLeak fails the test when err reveals one of the secrets.
func credNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if err != nil && strings.Contains(err.Error(), s) {
			t.Errorf("error %q reveals the credential %q", err, s)
		}
	}
}

// TestCredentials runs Providers over Credentials against a real API server: the token posted is the
// one the Secret holds at the time of the post, and every failure names the
// host or the Secret key, never the credential.
func TestCredentials(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	k8s, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"git", "elsewhere"} {
		if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	gitea := newCredServer(t, nil)
	github := newCredServer(t, nil)
	missing := newCredServer(t, nil)
	tokenSecret := fixtures.Secret("git", "gitea-token", map[string]string{"token": "tok-one\n", "unreferenced": "keep-out-of-memory"})
	for _, s := range []*corev1.Secret{
		tokenSecret,
		fixtures.Secret("git", "github", map[string]string{"pat": "ghp-pat-one"}),
		fixtures.Secret("git", "unrelated", map[string]string{"password": "not-ours"}),
		// A Secret in a namespace no reference names is not watched.
		fixtures.Secret("elsewhere", "not-watched", map[string]string{"token": "elsewhere-token"}),
	} {
		if err := k8s.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := githost.NewCredentials(env.Config, nil, []githost.HostConfig{
		{URL: gitea.URL, Type: githost.Gitea, Token: &githost.SecretRef{Namespace: "git", Name: "gitea-token", Key: "token"}},
		{URL: github.URL + "/", Type: githost.GitHub, Token: &githost.SecretRef{Namespace: "git", Name: "github", Key: "pat"}},
		{URL: missing.URL, Type: githost.Gitea, Token: &githost.SecretRef{Namespace: "git", Name: "no-such-secret", Key: "token"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProviders(c, githost.Clients{})
	if got := c.Namespaces(); !slices.Equal(got, []string{"git"}) {
		t.Errorf("Namespaces() = %q, want [git]", got)
	}
	giteaRepo, githubRepo := credRepoOn(t, gitea), credRepoOn(t, github)
	// The Reporter may post before the manager has started the
	// Credentials: that post waits for the Secrets rather than failing.
	early := make(chan error, 1)
	go func() { early <- credPost(p, giteaRepo) }()
	// Not synchronisation: the post must still be waiting a while later.
	select {
	case err := <-early:
		t.Fatalf("post before Start returned before the Secrets could be read: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	testenv.RunT(t, c)
	if err := <-early; err != nil {
		t.Errorf("post before Start: %v", err)
	}

	t.Run("token from the Secret", func(t *testing.T) {
		if err := credPost(p, giteaRepo); err != nil {
			t.Fatal(err)
		}
		// The Secret's trailing newline is not part of the token.
		if got, want := gitea.last(), "POST /api/v1/repos/owner/name/statuses/"+credSHA+" token tok-one"; got != want {
			t.Errorf("request = %q, want %q", got, want)
		}
		if err := credPost(p, githubRepo); err != nil {
			t.Fatal(err)
		}
		if got, want := github.last(), "POST /api/v3/repos/owner/name/statuses/"+credSHA+" Bearer ghp-pat-one"; got != want {
			t.Errorf("request = %q, want %q", got, want)
		}
	})

	t.Run("provider reused while the Secret is unchanged", func(t *testing.T) {
		p1, err := p.ProviderFor(giteaRepo)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := p.ProviderFor(giteaRepo)
		if err != nil {
			t.Fatal(err)
		}
		if p1 != p2 {
			t.Error("ProviderFor built a new provider although the Secret did not change")
		}
	})

	t.Run("rotated token is used on the next post", func(t *testing.T) {
		tokenSecret.Data["token"] = []byte("tok-two")
		if err := k8s.Update(ctx, tokenSecret); err != nil {
			t.Fatal(err)
		}
		testenv.EventuallyT(t, "post with the rotated token", 30*time.Second, func() error {
			if err := credPost(p, giteaRepo); err != nil {
				return err
			}
			if got := gitea.last(); !strings.HasSuffix(got, " token tok-two") {
				return fmt.Errorf("request %q", got)
			}
			return nil
		})
	})

	t.Run("key missing from the Secret", func(t *testing.T) {
		tokenSecret.Data = map[string][]byte{"tokne": []byte("tok-three")}
		if err := k8s.Update(ctx, tokenSecret); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`git host %s: Secret git/gitea-token key "token" does not exist: the Secret has no such key`, gitea.URL)
		testenv.EventuallyT(t, "the error about the missing key", 30*time.Second, func() error {
			_, err := p.ProviderFor(giteaRepo)
			if err == nil || err.Error() != want {
				return fmt.Errorf("error %v, want %q", err, want)
			}
			return nil
		})
	})

	t.Run("empty key", func(t *testing.T) {
		tokenSecret.Data = map[string][]byte{"token": {}}
		if err := k8s.Update(ctx, tokenSecret); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`git host %s: Secret git/gitea-token key "token" is empty`, gitea.URL)
		testenv.EventuallyT(t, "the error about the empty key", 30*time.Second, func() error {
			_, err := p.ProviderFor(giteaRepo)
			if err == nil || err.Error() != want {
				return fmt.Errorf("error %v, want %q", err, want)
			}
			return nil
		})
	})

	t.Run("Secret missing", func(t *testing.T) {
		_, err := p.ProviderFor(credRepoOn(t, missing))
		want := fmt.Sprintf(`git host %s: reading Secret git/no-such-secret key "token": the Secret does not exist`, missing.URL)
		if err == nil || err.Error() != want {
			t.Errorf("error = %v\nwant    %q", err, want)
		}
	})

	t.Run("Secret deleted", func(t *testing.T) {
		if err := k8s.Delete(ctx, tokenSecret); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`git host %s: reading Secret git/gitea-token key "token": the Secret does not exist`, gitea.URL)
		testenv.EventuallyT(t, "the error about the deleted Secret", 30*time.Second, func() error {
			_, err := p.ProviderFor(giteaRepo)
			credNoLeak(t, err, "tok-one", "tok-two", "tok-three")
			if err == nil || err.Error() != want {
				return fmt.Errorf("error %v, want %q", err, want)
			}
			return nil
		})
		// Recreated, it is used again.
		tokenSecret = fixtures.Secret("git", "gitea-token", map[string]string{"token": "tok-four"})
		if err := k8s.Create(ctx, tokenSecret); err != nil {
			t.Fatal(err)
		}
		testenv.EventuallyT(t, "post with the recreated Secret", 30*time.Second, func() error {
			if err := credPost(p, giteaRepo); err != nil {
				return err
			}
			if got := gitea.last(); !strings.HasSuffix(got, " token tok-four") {
				return fmt.Errorf("request %q", got)
			}
			return nil
		})
	})

	t.Run("host not configured", func(t *testing.T) {
		for _, repo := range []githost.Repository{
			{Host: "gitlab.example.com", Path: "group/name", Owner: "group", Name: "name"},
			// ResolveHost knows github.com without configuration, but
			// without credentials it cannot post there.
			{Host: "github.com", Path: "owner/name", Owner: "owner", Name: "name"},
		} {
			_, err := p.ProviderFor(repo)
			want := fmt.Sprintf("no Git host is configured for %s (repository %s/%s): add it to gitStatus.hosts with its credentials", repo.Host, repo.Host, repo.Path)
			if err == nil || err.Error() != want {
				t.Errorf("ProviderFor(%s) error = %v\nwant    %q", repo.Host, err, want)
			}
		}
	})
}

// TestCredentialsGitHubApp: the App's private key comes from the Secret: the
// installation token is requested with a JWT that the key's public half
// verifies, and the status is posted with that installation token.
func TestCredentialsGitHubApp(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	ctx := context.Background()
	k8s, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})

	var jwtErr error
	var jwtMu sync.Mutex
	srv := newCredServer(t, func(w http.ResponseWriter, r *http.Request) {
		err := credVerifyJWT(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), &key.PublicKey)
		jwtMu.Lock()
		jwtErr = errors.Join(jwtErr, err)
		jwtMu.Unlock()
		if r.URL.Path != "/api/v3/app/installations/67/access_tokens" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"token": "ghs-installation", "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
	})
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "git"}}); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "git", Name: "app"},
		Data:       map[string][]byte{"privateKey": keyPEM},
	}); err != nil {
		t.Fatal(err)
	}
	c, err := githost.NewCredentials(env.Config, nil, []githost.HostConfig{{
		URL: srv.URL, Type: githost.GitHub,
		App: &githost.AppConfig{AppID: 12, InstallationID: 67, PrivateKey: githost.SecretRef{Namespace: "git", Name: "app", Key: "privateKey"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p := NewProviders(c, githost.Clients{})
	testenv.RunT(t, c)
	if err := credPost(p, credRepoOn(t, srv)); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.last(), "POST /api/v3/repos/owner/name/statuses/"+credSHA+" token ghs-installation"; got != want {
		t.Errorf("request = %q, want %q", got, want)
	}
	jwtMu.Lock()
	defer jwtMu.Unlock()
	if jwtErr != nil {
		t.Errorf("installation token requested without a JWT signed by the Secret's key: %v", jwtErr)
	}

	t.Run("private key that does not parse", func(t *testing.T) {
		broken := "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n"
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "git", Name: "app"}, Data: map[string][]byte{"privateKey": []byte(broken)}}
		if err := k8s.Update(ctx, s); err != nil {
			t.Fatal(err)
		}
		testenv.EventuallyT(t, "the error about the key", 30*time.Second, func() error {
			_, err := p.ProviderFor(credRepoOn(t, srv))
			credNoLeak(t, err, "bm90IGEga2V5")
			if err == nil || !strings.Contains(err.Error(), `(credential from Secret git/app key "privateKey")`) {
				return fmt.Errorf("error %v, want one naming the Secret key", err)
			}
			t.Log(err)
			return nil
		})
	})
}

// credVerifyJWT checks an RS256 JWT's signature with pub.
func credVerifyJWT(jwt string, pub *rsa.PublicKey) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("%q is not a JWT", jwt)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig)
}
