package argoenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/test/testenv"
)

// lookRedis finds Debian's redis-server, which build.sh installs when missing.
func lookRedis() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("argoenv: redis-server not found: run `make testenv` (it installs Debian's redis-server): %w", err)
	}
	return p, nil
}

// startProcesses starts Redis, then the three Argo CD programs together, and waits
// for each to be ready; the waits overlap with the others' start-up.
func (a *ArgoCD) startProcesses(ctx context.Context, bin binPaths, resync time.Duration) error {
	ports, err := testenv.FreePorts(6)
	if err != nil {
		return err
	}
	redisPort, repoPort, repoMetrics, ctrlMetrics, serverPort, serverMetrics := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	redisAddr := "127.0.0.1:" + strconv.Itoa(redisPort)
	repoAddr := "127.0.0.1:" + strconv.Itoa(repoPort)
	a.ServerURL = "http://127.0.0.1:" + strconv.Itoa(serverPort)

	d := func(name string) string { return filepath.Join(a.Dir, name) }
	for _, name := range []string{"redis", "tls", "ssh", "home", "tmp", "plugins", "static"} {
		if err := os.MkdirAll(d(name), 0o755); err != nil {
			return err
		}
	}

	// No persistence: the cache starts empty with every Start and nothing is written.
	redis, err := a.start("redis", bin.redisSv, []string{
		"--bind", "127.0.0.1", "--port", strconv.Itoa(redisPort),
		"--save", "", "--appendonly", "no", "--dir", d("redis"),
	})
	if err != nil {
		return err
	}
	if err := a.poll(ctx, redis, func(context.Context) error { return redisPing(redisAddr) }); err != nil {
		return err
	}

	// What every Argo CD program needs to run outside a cluster, in a directory of
	// its own: the in-cluster destination is the API server of $KUBECONFIG
	// (ARGOCD_FAKE_IN_CLUSTER reads that, not --kubeconfig); TLS/SSH known-hosts
	// data, the askpass socket, the plugin sockets and the checkouts (TMPDIR) live
	// in Dir instead of /app, /tmp and /home/argocd; HOME keeps the developer's
	// ~/.gitconfig out. PATH holds git-verify-wrapper.sh, which the repo-server runs
	// for every manifest generation, argocd itself, which git runs as GIT_ASKPASS
	// for private repositories, and helm, which renders Helm sources (Argo CD
	// v3.6.1 ships Helm v4.3.1 but only runs commands and flags v3 has too), ahead
	// of any other helm on the developer's PATH.
	common := []string{
		"ARGOCD_FAKE_IN_CLUSTER=true",
		"KUBECONFIG=" + a.env.Kubeconfig,
		"ARGOCD_GPG_ENABLED=false",
		"ARGOCD_TLS_DATA_PATH=" + d("tls"),
		"ARGOCD_SSH_DATA_PATH=" + d("ssh"),
		"ARGOCD_ASK_PASS_SOCK=" + d("askpass.sock"),
		"ARGOCD_PLUGINSOCKFILEPATH=" + d("plugins"),
		"HOME=" + d("home"),
		"TMPDIR=" + d("tmp"),
		"PATH=" + bin.hack + string(os.PathListSeparator) + bin.dir + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	argo := func(name string, args ...string) (*testenv.Process, error) {
		args = slices.Concat(args, []string{"--logformat", "text", "--redis", redisAddr})
		return a.start(name, bin.argocd, args, slices.Concat(common, []string{"ARGOCD_BINARY_NAME=" + name})...)
	}
	kube := []string{"--kubeconfig", a.env.Kubeconfig, "--namespace", a.Namespace}
	if len(a.ApplicationNamespaces) > 0 {
		// Both read it: the controller reconciles Applications of these
		// namespaces, the server answers for them (?appNamespace=).
		kube = append(kube, "--application-namespaces", strings.Join(a.ApplicationNamespaces, ","))
	}
	toRepo := []string{"--repo-server", repoAddr, "--repo-server-plaintext"}

	repo, err := argo("argocd-repo-server",
		"--address", "127.0.0.1", "--port", strconv.Itoa(repoPort),
		"--metrics-address", "127.0.0.1", "--metrics-port", strconv.Itoa(repoMetrics),
		// Plain gRPC; without an empty CA path it insists on reading a client CA.
		"--disable-tls", "--client-ca-path", "")
	if err != nil {
		return err
	}
	// The controller's metrics (and health) listener always binds 0.0.0.0; a free
	// port keeps parallel test packages apart.
	ctrl, err := argo("argocd-application-controller", slices.Concat(kube, toRepo, []string{
		"--app-resync", strconv.Itoa(max(1, int(resync.Seconds()))),
		"--metrics-port", strconv.Itoa(ctrlMetrics),
	})...)
	if err != nil {
		return err
	}
	srv, err := argo("argocd-server", slices.Concat(kube, toRepo, []string{
		"--insecure", "--address", "127.0.0.1", "--port", strconv.Itoa(serverPort),
		"--metrics-address", "127.0.0.1", "--metrics-port", strconv.Itoa(serverMetrics),
		// The UI is not built (it needs a node toolchain); an empty directory will do.
		"--staticassets", d("static"),
	})...)
	if err != nil {
		return err
	}

	if err := a.poll(ctx, repo, testenv.HTTPOK(a.http, fmt.Sprintf("http://127.0.0.1:%d/healthz?full=true", repoMetrics))); err != nil {
		return err
	}
	if err := a.poll(ctx, ctrl, testenv.HTTPOK(a.http, fmt.Sprintf("http://127.0.0.1:%d/healthz", ctrlMetrics))); err != nil {
		return err
	}
	if err := a.poll(ctx, srv, testenv.HTTPOK(a.http, a.ServerURL+"/healthz?full=true")); err != nil {
		return err
	}
	// Healthy is not yet usable: the login needs the signing key the server
	// creates in argocd-secret at start-up. The token is kept for API.
	return a.poll(ctx, srv, func(ctx context.Context) error {
		_, err := a.adminToken(ctx)
		return err
	})
}

// start runs one program with its log in <Dir>/<name>.log (appended to).
func (a *ArgoCD) start(name, binary string, args []string, env ...string) (*testenv.Process, error) {
	p, err := testenv.StartProcess(testenv.ProcessOptions{
		Name: name, Binary: binary, Args: args, Env: env,
		Dir: a.Dir, Log: filepath.Join(a.Dir, name+".log"), AppendLog: true,
	})
	if err != nil {
		return nil, err
	}
	a.procs = append(a.procs, p)
	return p, nil
}

// poll waits for p to be ready, watching every Argo CD process (testenv.Poll).
func (a *ArgoCD) poll(ctx context.Context, p *testenv.Process, check func(context.Context) error) error {
	return testenv.Poll(ctx, p, p.Name(), a.Exited, check)
}

// redisPing sends PING and expects +PONG. Two lines of the Redis protocol are all
// a readiness check needs; a Redis client module would be a dependency for them.
func redisPing(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("redis at %s answered PING with %q", addr, line)
	}
	return nil
}
