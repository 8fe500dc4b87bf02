package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/claimwarden/claimwarden/config"
	"github.com/claimwarden/claimwarden/test/promenv"
)

const (
	// scrapeInterval is Prometheus's: usage shows a second after it changes.
	scrapeInterval = time.Second
	// autoresizeTokenSecret holds the token claimwarden opens pull requests
	// with: write access is kept apart from the commit-status token.
	autoresizeTokenSecret = "gitea-autoresize-token"
)

// autoresizeYAML is the configuration the story adds, its values short
// enough that the story takes minutes, not the days the defaults are made
// for; the comments say so to the reader. Parameters: Prometheus's URL,
// Gitea's URL, the Gitea user, the token's Secret.
const autoresizeYAML = `policies:
  params:
    autoresize_cooldown_seconds: 60   # default a day: no second pull request right after the merge
autoresize:
  interval: 2s                        # default 5m: how often usage is read
  window: 1m                          # default 6h: how far back growth is measured
  prometheus: {url: %[1]s}
  namespaces:
  - {namespace: "*", repositoryPrefixes: ["%[2]s/%[3]s"], allStatefulSets: true}
  hosts:
  - {url: %[2]s, type: gitea, tokenSecretRef: {name: %[4]s}}
`

// startAutoresize starts Gitea and Flux as the flux story does, then serves
// the simulator's volume statistics to a real Prometheus, and returns the
// controller's flags: the Flux integration on (autoresize proposes to the
// repositories Flux applies), and the configuration with autoresize.
func startAutoresize(ctx context.Context, cl *cluster, out *printer) ([]string, error) {
	args, err := startFlux(ctx, cl, out)
	if err != nil {
		return nil, err
	}
	stats, err := cl.serveVolumeStats()
	if err != nil {
		return nil, err
	}
	out.ok("storage simulator serves kubelet_volume_stats_* for its volumes at http://" + stats + "/metrics, as a kubelet does")
	prom, err := promenv.Start(filepath.Join(cl.env.Dir, "prometheus"), scrapeInterval, stats)
	if err != nil {
		return nil, err
	}
	cl.prom = prom
	out.ok(fmt.Sprintf("Prometheus running at %s, scraping it every %s (log %s)", prom.URL, scrapeInterval, prom.LogPath()))
	body, err := autoresizeConfig(ctx, cl)
	if err != nil {
		return nil, err
	}
	out.ok(fmt.Sprintf("Secret %s/%s holds a second Gitea token, to push branches and open pull requests; %s adds:",
		config.DefaultLeaderElectionNamespace, autoresizeTokenSecret, configPath(cl)))
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		out.note("  " + out.paint(dim, l))
	}
	return args, nil
}

// serveVolumeStats serves the simulator's kubelet-style volume statistics
// on a free loopback port until stop, and returns its host:port.
func (cl *cluster) serveVolumeStats() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", cl.sim.MetricsHandler())
	cl.stats = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		// Serve returns ErrServerClosed at stop; an earlier end shows as
		// Prometheus reporting no usage, which the story waits for.
		_ = cl.stats.Serve(l)
	}()
	return l.Addr().String(), nil
}

// autoresizeConfig gives claimwarden a token that can write the
// repositories and read its own user (whose pull requests are
// claimwarden's), in a Secret, and appends to its configuration file the
// autoresize section (every StatefulSet of every namespace, pull requests
// to the Gitea user's repositories, usage from Prometheus) and the short
// cooldown. It returns what it appended.
func autoresizeConfig(ctx context.Context, cl *cluster) (string, error) {
	token, err := cl.gitea.CreateToken(ctx, "claimwarden-autoresize", "write:repository", "read:user")
	if err != nil {
		return "", err
	}
	if err := controllerSecret(ctx, cl, autoresizeTokenSecret, token); err != nil {
		return "", err
	}
	body := fmt.Sprintf(autoresizeYAML, cl.prom.URL, cl.gitea.URL, cl.gitea.User, autoresizeTokenSecret)
	f, err := os.OpenFile(configPath(cl), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return "", err
	}
	return body, f.Close()
}

// autoresizeHints says where to look at usage and the pull request under -keep.
func autoresizeHints(cl *cluster, kubectl string, out *printer) {
	fluxHints(cl, kubectl, out)
	out.cmd(kubectl + " get vcr " + stsName + " -n " + namespace + " -o jsonpath='{.status.autoresize}'")
	out.note(fmt.Sprintf("the pull requests, in a browser: %s/%s/%s/pulls?state=all", cl.gitea.URL, cl.gitea.User, repoName))
	out.note(fmt.Sprintf("usage as Prometheus sees it: %s/graph?g0.expr=kubelet_volume_stats_used_bytes", cl.prom.URL))
}
