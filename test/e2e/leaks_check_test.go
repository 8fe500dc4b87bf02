package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// capture collects what a check reports.
type capture []string

func (c *capture) Errorf(format string, args ...any) { *c = append(*c, fmt.Sprintf(format, args...)) }

// The leak check can fail: a secret planted URL-encoded in a log and
// base64-encoded (a basic-auth header) in an event is reported in both
// places (the event through both event APIs), naming them and not quoting
// the secret.
func TestLeakCheckFindsPlantedSecrets(t *testing.T) {
	cl := started(t)
	ns := namespace(t, cl.admin)
	secret := "planted/secret+" + strconv.FormatInt(time.Now().UnixNano(), 36)
	useSecret(t, "planted token", secret)

	log := filepath.Join(t.TempDir(), "planted.log")
	line := `{"msg":"GET /api?token=` + url.QueryEscape(secret) + `"}` + "\n"
	if err := os.WriteFile(log, []byte("{\"msg\":\"clean\"}\n"+line), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "planted"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web-0"},
		Reason:         "Planted",
		Message:        "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("claimwarden:"+secret)),
		Type:           corev1.EventTypeNormal,
	}
	if err := cl.admin.Create(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	// Gone before the test's own check (started's cleanup, the last).
	t.Cleanup(func() {
		if err := cl.admin.Delete(context.Background(), ev); err != nil {
			t.Error(err)
		}
	})

	var got capture
	scanLog(&got, log)
	scanCluster(&got, cl.admin)
	want := []string{
		log + " line 2 holds the planted token (query-escaped)",
		"event (core) " + ns + "/planted holds the planted token (base64)",
		// The same Event read through events.k8s.io.
		"event " + ns + "/planted holds the planted token (base64)",
	}
	joined := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(joined, w) {
			t.Errorf("the check reported %q, want %q among it", got, w)
		}
	}
	if len(got) != len(want) || strings.Contains(joined, secret) {
		t.Errorf("the check reported %q: want exactly %d findings, none quoting the secret", got, len(want))
	}
}
