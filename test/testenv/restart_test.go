package testenv

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A restart of etcd or kube-apiserver keeps what was stored, and a client
// made before it works after it.
func TestRestartsKeepTheData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := StartT(t, Options{})
	c, err := kubernetes.NewForConfig(e.Config)
	must(t, err)
	_, err = c.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kept"}}, metav1.CreateOptions{})
	must(t, err)
	for name, restart := range map[string]func(context.Context) (time.Duration, error){
		"etcd": e.RestartEtcd, "kube-apiserver": e.RestartAPIServer,
	} {
		took, err := restart(ctx)
		must(t, err)
		t.Logf("%s restarted, API ready again after %s", name, took.Round(time.Millisecond))
		if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "kept", metav1.GetOptions{}); err != nil {
			t.Fatalf("after the %s restart: %v", name, err)
		}
	}
	if err := e.exited(); err != nil {
		t.Fatalf("a component is down after the restarts: %v", err)
	}
}
