package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/claimwarden/claimwarden/api/v1alpha1"
	"github.com/claimwarden/claimwarden/test/gitea"
	"github.com/claimwarden/claimwarden/test/leakscan"
)

// journalKeySecret is the Secret the controller seals its crash journal
// with (the default name), in the namespaces the tests run it with.
const journalKeySecret = "claimwarden-journal-key"

// Everything the run produces is checked for the secrets it used: tokens,
// passwords, the journal key. Findings name where and which secret (never
// the text: the test output would leak it in turn), each once per run.
var (
	runSecrets = leakscan.New()

	leaksMu sync.Mutex
	// controllerLogs are the logs of every controller started, and
	// scannedLogs those already read (a log is complete once its test ends).
	controllerLogs []string
	scannedLogs    = map[string]bool{}
	reportedLeaks  = map[string]bool{}
)

// errorer is where a check reports: the test, or a capture in the test of
// the check itself.
type errorer interface {
	Errorf(format string, args ...any)
}

// useSecret makes value a secret no output of the run may contain.
func useSecret(t *testing.T, what, value string) {
	t.Helper()
	if err := runSecrets.Add(what, value); err != nil {
		t.Fatal(err)
	}
}

func addControllerLog(path string) {
	leaksMu.Lock()
	defer leaksMu.Unlock()
	controllerLogs = append(controllerLogs, path)
}

// startGitea starts Gitea for a test, makes its token and password secrets
// of the run, and before it stops checks every commit status on it.
func startGitea(t *testing.T) *gitea.Server {
	t.Helper()
	g := gitea.StartT(t)
	useSecret(t, "gitea token", g.Token)
	useSecret(t, "gitea password", g.Password)
	// Registered after StartT's cleanup, so it runs while Gitea still serves.
	t.Cleanup(func() {
		all, err := g.AllStatuses(context.Background())
		if err != nil {
			t.Errorf("reading every commit status to check it for secrets: %v", err)
			return
		}
		for commit, statuses := range all {
			for i, s := range statuses {
				reportLeaks(t, fmt.Sprintf("commit status %d of %s (%s)", i, commit, s.Context), s.Context+" "+s.Description+" "+s.TargetURL)
			}
		}
	})
	return g
}

// checkNoLeaks is every test's last cleanup (registered by started): the
// logs of the controllers the test ran, and every event and
// VolumeClaimRollout in the cluster, must hold none of the run's secrets.
func checkNoLeaks(t *testing.T, c client.Client) {
	ctx := context.Background()
	for _, ns := range []string{"default", controllerNamespace} {
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: journalKeySecret}, &s); err == nil {
			for k, v := range s.Data {
				useSecret(t, "journal key "+ns+"/"+k, string(v))
			}
		}
	}
	leaksMu.Lock()
	var logs []string
	for _, l := range controllerLogs {
		if !scannedLogs[l] {
			scannedLogs[l] = true
			logs = append(logs, l)
		}
	}
	leaksMu.Unlock()
	for _, l := range logs {
		scanLog(t, l)
	}
	scanCluster(t, c)
}

// scanCluster checks every event and VolumeClaimRollout.
func scanCluster(e errorer, c client.Client) {
	ctx := context.Background()
	var events eventsv1.EventList
	var coreEvents corev1.EventList
	var vcrs v1alpha1.VolumeClaimRolloutList
	for _, list := range []client.ObjectList{&events, &coreEvents, &vcrs} {
		if err := c.List(ctx, list); err != nil {
			e.Errorf("listing %T to check it for secrets: %v", list, err)
		}
	}
	for i := range events.Items {
		ev := &events.Items[i]
		reportLeaks(e, "event "+ev.Namespace+"/"+ev.Name, asJSON(ev))
	}
	for i := range coreEvents.Items {
		ev := &coreEvents.Items[i]
		reportLeaks(e, "event (core) "+ev.Namespace+"/"+ev.Name, asJSON(ev))
	}
	for i := range vcrs.Items {
		v := &vcrs.Items[i]
		// The journal (pendingRecreate) holds a StatefulSet, the rest is
		// what claimwarden says: all of it is readable by who reads the VCR.
		reportLeaks(e, "VolumeClaimRollout "+v.Namespace+"/"+v.Name, asJSON(v))
	}
}

func scanLog(t errorer, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("checking %s for secrets: %v", path, err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		reportLeaks(t, fmt.Sprintf("%s line %d", path, n), sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Errorf("checking %s for secrets: %v", path, err)
	}
}

// reportLeaks fails t for each secret in text that was not reported yet
// from where.
func reportLeaks(t errorer, where, text string) {
	for _, what := range runSecrets.Find(text) {
		key := where + ": " + what
		leaksMu.Lock()
		seen := reportedLeaks[key]
		reportedLeaks[key] = true
		leaksMu.Unlock()
		if !seen {
			t.Errorf("secret leaked: %s holds the %s", where, what)
		}
	}
}

func asJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(data)
}
