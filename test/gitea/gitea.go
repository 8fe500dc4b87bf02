// Package gitea runs a real Gitea (built by `make testenv` into bin/testenv/gitea)
// for tests of the commit-status integrations: a Git host with repositories,
// commits and GitHub-like commit statuses, on 127.0.0.1, backed by sqlite in a
// directory of the caller's choosing.
//
//	srv := gitea.StartT(t)
//	cloneURL, _ := srv.CreateRepo(ctx, "shop")
//	sha, _ := srv.PushCommit(ctx, "shop", map[string]string{"a.yaml": "x: 1\n"}, "first")
//	state, statuses, _ := srv.CombinedStatus(ctx, "shop", sha)
//
// Start takes about as long as three Gitea invocations (migrate, admin user
// create, web): a few seconds.
package gitea

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

const (
	// binName and srcName are the links build.sh makes in testenv.BinDir(): the
	// binary, and the source tree it reads templates/options/public from (it is
	// built without the 'bindata' tag, whose assets need a node toolchain).
	binName = "gitea"
	srcName = "gitea-src"

	// adminUser owns every repository the helpers create.
	adminUser  = "claimwarden"
	adminEmail = "claimwarden@example.com"

	// maxResponseItems is [api] MAX_RESPONSE_ITEMS. Gitea computes a combined
	// status over one page of statuses only, so CombinedStatus asks for one page
	// this large and fails rather than report a state computed from part of them.
	maxResponseItems = 1000

	// defaultStartTimeout bounds Start when ctx has no deadline.
	defaultStartTimeout = 2 * time.Minute
	// stopGrace is how long Gitea gets to shut down on SIGTERM before SIGKILL.
	stopGrace = 10 * time.Second
)

// Server is a running Gitea. Stop it when done.
type Server struct {
	// URL is the root URL without a trailing slash, e.g. http://127.0.0.1:41234;
	// the REST API is under URL + "/api/v1".
	URL string
	// Token is an access token of User with every scope.
	Token string
	// User is the admin user; it owns the repositories CreateRepo makes.
	User string
	// Password is User's password, for HTTP basic auth (e.g. git over HTTP).
	Password string
	// Dir holds app.ini, the sqlite database, the repositories and the logs.
	Dir string
	// StartupTime is how long Start took.
	StartupTime time.Duration

	http     *http.Client
	cmd      *exec.Cmd
	done     chan struct{} // closed once gitea web has been reaped; waitErr is set then
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// Start writes <dir>/custom/conf/app.ini, creates the database (gitea migrate)
// and the admin user with an all-scopes token (gitea admin user create), then
// runs gitea web on a free loopback port and returns once the API answers with
// that token. dir is created if missing and should be empty: nothing is reset, so
// a second Start in the same dir fails (its admin user exists). ctx bounds Start only; gitea web runs until Stop, or until the test
// binary dies. On error, the process is stopped and the error carries the log.
func Start(ctx context.Context, dir string) (_ *Server, err error) {
	began := time.Now()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	bin, src, err := binaries()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:      "http://127.0.0.1:" + strconv.Itoa(port),
		User:     adminUser,
		Password: randomHex(16),
		Dir:      dir,
		// No proxy: the server is on loopback, and a developer's HTTP_PROXY must
		// not see (or break) test traffic.
		http: &http.Client{Transport: &http.Transport{Proxy: nil}},
	}
	ini, err := s.writeConfig(src, port)
	if err != nil {
		return nil, err
	}
	// Global flags go before the subcommand. --work-path matters besides --config:
	// relative paths Gitea derives (custom/, data/) must land in dir, not next to
	// the binary in the shared cache.
	global := []string{"--work-path", dir, "--custom-path", filepath.Join(dir, "custom"), "--config", ini}

	if _, err := s.run(ctx, bin, append(global, "migrate")...); err != nil {
		return nil, err
	}
	out, err := s.run(ctx, bin, append(global, "admin", "user", "create",
		"--username", s.User, "--password", s.Password, "--email", adminEmail,
		"--admin", "--must-change-password=false",
		"--access-token", "--access-token-scopes", "all")...)
	if err != nil {
		return nil, err
	}
	if s.Token, err = parseToken(out); err != nil {
		return nil, fmt.Errorf("gitea admin user create: %w; output:\n%s", err, out)
	}

	if err := s.startWeb(bin, global); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	s.StartupTime = time.Since(began)
	return s, nil
}

// StartT starts a Server in t.TempDir() and stops it in t.Cleanup; a failed test
// gets the end of Gitea's logs in its output.
func StartT(t testing.TB) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), defaultStartTimeout)
	defer cancel()
	s, err := Start(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Registered after t.TempDir, so it runs before the directory is removed.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gitea: last log lines:\n%s", s.LogTail(40))
		}
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Stop shuts Gitea down (SIGTERM to its process group, SIGKILL after a grace
// period). It reports Gitea having died on its own before Stop, since a crash
// during a test is worth knowing about. Calling it again returns the same result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			s.stopErr = fmt.Errorf("gitea web crashed before Stop (%v); log:\n%s", s.waitErr, s.LogTail(20))
			return
		default:
		}
		pgid := -s.cmd.Process.Pid
		_ = syscall.Kill(pgid, syscall.SIGTERM)
		timer := time.NewTimer(stopGrace)
		defer timer.Stop()
		select {
		case <-s.done:
		case <-timer.C:
			_ = syscall.Kill(pgid, syscall.SIGKILL)
			<-s.done
		}
		// Git processes Gitea spawned share its group; none may outlive it.
		_ = syscall.Kill(pgid, syscall.SIGKILL)
	})
	return s.stopErr
}

// LogTail returns the last n lines of Gitea's own log and of its stdout/stderr
// (where it writes what happens before its logger is set up, and panics).
func (s *Server) LogTail(n int) string {
	var b strings.Builder
	for _, f := range []string{s.logFile(), s.outFile()} {
		fmt.Fprintf(&b, "==> %s <==\n%s\n", f, testenv.TailFile(f, n))
	}
	return b.String()
}

func (s *Server) logFile() string { return filepath.Join(s.Dir, "log", "gitea.log") }
func (s *Server) outFile() string { return filepath.Join(s.Dir, "gitea.out") }

// binaries finds the Gitea binary and source tree linked by build.sh.
func binaries() (bin, src string, err error) {
	binDir, err := testenv.BinDir()
	if err != nil {
		return "", "", err
	}
	bin = filepath.Join(binDir, binName)
	// The source tree is resolved so that app.ini and the logs name the real
	// (versioned, cached) directory rather than a link that build.sh may move.
	src, srcErr := filepath.EvalSymlinks(filepath.Join(binDir, srcName))
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || srcErr != nil {
		return "", "", fmt.Errorf("gitea: missing %s or %s in %s: run `make testenv` (or set %s)", binName, srcName, binDir, testenv.BinDirEnv)
	}
	if _, err := os.Stat(filepath.Join(src, "templates")); err != nil {
		return "", "", fmt.Errorf("gitea: %s has no templates/ (not a Gitea source tree?): %w", src, err)
	}
	return bin, src, nil
}

// writeConfig writes app.ini where Gitea looks for it by default under its work
// path, and returns its path.
func (s *Server) writeConfig(src string, port int) (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	ini := filepath.Join(s.Dir, "custom", "conf", "app.ini")
	if err := os.MkdirAll(filepath.Dir(ini), 0o755); err != nil {
		return "", err
	}
	data := filepath.Join(s.Dir, "data")
	sections := []struct {
		name string
		keys [][2]string
	}{
		{"", [][2]string{
			{"APP_NAME", "claimwarden test"},
			{"RUN_MODE", "prod"},
			{"WORK_PATH", s.Dir},
			// Gitea refuses to start unless RUN_USER is the user running it, and
			// refuses root unless told otherwise (containers and CI often run as root).
			{"RUN_USER", u.Username},
			{"I_AM_BEING_UNSAFE_RUNNING_AS_ROOT", strconv.FormatBool(os.Getuid() == 0)},
		}},
		{"server", [][2]string{
			{"PROTOCOL", "http"},
			{"HTTP_ADDR", "127.0.0.1"},
			{"HTTP_PORT", strconv.Itoa(port)},
			{"DOMAIN", "127.0.0.1"},
			{"ROOT_URL", s.URL + "/"},
			// No CDN, no Gravatar: nothing leaves the machine.
			{"OFFLINE_MODE", "true"},
			{"STATIC_ROOT_PATH", src},
			{"APP_DATA_PATH", data},
			{"DISABLE_SSH", "true"},
			{"START_SSH_SERVER", "false"},
			{"LFS_START_SERVER", "false"},
		}},
		{"database", [][2]string{
			{"DB_TYPE", "sqlite3"},
			{"PATH", filepath.Join(data, "gitea.db")},
		}},
		{"repository", [][2]string{
			{"ROOT", filepath.Join(s.Dir, "repositories")},
			{"DEFAULT_BRANCH", "main"},
		}},
		{"git", [][2]string{
			// Gitea runs git with HOME set here, so the developer's ~/.gitconfig
			// (signing, hooks, URL rewrites) does not change what it does.
			{"HOME_PATH", filepath.Join(data, "home")},
		}},
		{"security", [][2]string{
			{"INSTALL_LOCK", "true"},
			// Gitea generates these when missing and writes them back into app.ini;
			// giving them up front keeps the three invocations from each rewriting it.
			{"SECRET_KEY", randomHex(32)},
			{"INTERNAL_TOKEN", randomHex(32)},
		}},
		{"oauth2", [][2]string{
			{"ENABLED", "false"},
			// Needed even with OAuth2 off: it also signs other tokens (see above).
			{"JWT_SECRET", jwtSecret()},
		}},
		{"api", [][2]string{
			{"MAX_RESPONSE_ITEMS", strconv.Itoa(maxResponseItems)},
		}},
		{"log", [][2]string{
			{"MODE", "file"},
			{"LEVEL", "Info"},
			{"ROOT_PATH", filepath.Join(s.Dir, "log")},
		}},
		{"service", [][2]string{{"DISABLE_REGISTRATION", "true"}}},
		{"mailer", [][2]string{{"ENABLED", "false"}}},
		{"openid", [][2]string{{"ENABLE_OPENID_SIGNIN", "false"}, {"ENABLE_OPENID_SIGNUP", "false"}}},
		// The default issue indexer (bleve) builds an on-disk index at start-up.
		{"indexer", [][2]string{{"ISSUE_INDEXER_TYPE", "db"}, {"REPO_INDEXER_ENABLED", "false"}}},
		{"actions", [][2]string{{"ENABLED", "false"}}},
		// The package registry serves Helm repositories (PushChart).
		{"packages", [][2]string{{"ENABLED", "true"}}},
		{"session", [][2]string{{"PROVIDER", "memory"}}},
	}
	var b strings.Builder
	for _, sec := range sections {
		if sec.name != "" {
			fmt.Fprintf(&b, "\n[%s]\n", sec.name)
		}
		for _, kv := range sec.keys {
			fmt.Fprintf(&b, "%s = %s\n", kv[0], kv[1])
		}
	}
	// Cron tasks that run at start-up or reach the network (the update checker
	// calls dl.gitea.com): off, so start-up is quicker and the server's work is
	// only what a test asks for. Gitea has no switch for all of them at once.
	for _, task := range []string{
		"update_checker", "archive_cleanup", "check_repo_stats", "update_migration_poster_id",
		"cleanup_actions", "deleted_branches_cleanup", "cleanup_packages", "update_mirrors",
		"repo_health_check", "cleanup_hook_task_table", "sync_external_users",
	} {
		fmt.Fprintf(&b, "\n[cron.%s]\nENABLED = false\nRUN_AT_START = false\n", task)
	}
	return ini, os.WriteFile(ini, []byte(b.String()), 0o600)
}

// command prepares a Gitea invocation: in its own process group (so Stop reaches
// the git processes it spawns) with a parent-death signal on Linux (so a killed
// test binary takes Gitea with it), and with the environment cleaned (see childEnv).
func (s *Server) command(bin string, args []string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.Dir
	cmd.Env = childEnv()
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// run runs a one-shot Gitea command to completion and returns its stdout; both
// streams are appended to gitea.out. Cancelling ctx kills its process group.
func (s *Server) run(ctx context.Context, bin string, args ...string) (string, error) {
	f, err := os.OpenFile(s.outFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fmt.Fprintf(f, "# gitea %s\n", strings.Join(redact(args, s.Password), " "))
	cmd := s.command(bin, args)
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, f
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		err = ctx.Err()
	}
	// stdout holds the token; it is logged anyway: the server is throw-away and
	// its directory is the caller's, and the full output helps when parsing fails.
	f.WriteString(stdout.String())
	if err != nil {
		return stdout.String(), fmt.Errorf("gitea %s: %w; output:\n%s", args[len(globalFlags(args))], err, testenv.TailFile(s.outFile(), 20))
	}
	return stdout.String(), nil
}

// startWeb starts `gitea web`; it runs until Stop.
func (s *Server) startWeb(bin string, global []string) error {
	f, err := os.OpenFile(s.outFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// The child writes to its own copy of the descriptor.
	defer f.Close()
	args := append(global, "web")
	fmt.Fprintf(f, "# gitea %s\n", strings.Join(args, " "))
	cmd := s.command(bin, args)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start gitea web: %w", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return nil
}

// waitReady polls /api/healthz every 100 ms until it answers 200, failing at once
// if gitea web exits, then checks that the token authenticates as the admin.
func (s *Server) waitReady(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-s.done:
			return fmt.Errorf("gitea web exited (%v); log:\n%s", s.waitErr, s.LogTail(20))
		default:
		}
		if last = s.healthz(ctx); last == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gitea not ready: %w (last check: %v); log:\n%s", ctx.Err(), last, s.LogTail(20))
		case <-tick.C:
		}
	}
	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	if err := s.API(ctx, http.MethodGet, "/user", nil, &me); err != nil {
		return fmt.Errorf("gitea: the admin token does not work: %w", err)
	}
	if me.Login != s.User || !me.IsAdmin {
		return fmt.Errorf("gitea: the token authenticates as %q (admin %v), want admin %q", me.Login, me.IsAdmin, s.User)
	}
	return nil
}

func (s *Server) healthz(ctx context.Context) error {
	return testenv.HTTPOK(s.http, s.URL+"/api/healthz")(ctx)
}

// parseToken finds the token in the output of `gitea admin user create
// --access-token`: "Access token was successfully created... <token>".
func parseToken(out string) (string, error) {
	const marker = "Access token was successfully created..."
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), marker); ok {
			if tok := strings.TrimSpace(rest); tok != "" {
				return tok, nil
			}
		}
	}
	return "", errors.New("no access token in the output")
}

// childEnv is the environment minus what could point Gitea or the git it runs
// elsewhere: GITEA_* (GITEA_WORK_DIR, GITEA_CUSTOM, GITEA_RUN_MODE, ...) and
// GIT_* (GIT_DIR and friends are set when tests run from a git hook).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITEA_") && !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// globalFlags returns the leading "--flag value" pairs of args (for messages that
// name the subcommand).
func globalFlags(args []string) []string {
	i := 0
	for i+1 < len(args) && strings.HasPrefix(args[i], "--") {
		i += 2
	}
	return args[:i]
}

// redact replaces secret in args, for the command line written to the log.
func redact(args []string, secret string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, secret, "REDACTED")
	}
	return out
}

// freePort returns a free loopback port. It can be taken by someone else before
// Gitea binds it; gitea web then exits and waitReady reports it at once.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return hex.EncodeToString(b)
}

// jwtSecret is what Gitea accepts as a JWT secret: 32 bytes, unpadded base64url.
func jwtSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
