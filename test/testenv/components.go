package testenv

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kubeClientFlags are the flags kube-controller-manager and kube-scheduler share: the
// admin kubeconfig for their work and for delegated authn/authz of their own HTTPS
// endpoint, which serves on loopback with the environment's serving certificate.
func (e *Env) kubeClientFlags(port int) []string {
	return []string{
		"--kubeconfig", e.Kubeconfig,
		"--authentication-kubeconfig", e.Kubeconfig,
		"--authorization-kubeconfig", e.Kubeconfig,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(port),
		"--tls-cert-file", e.pki.ServingCert, "--tls-private-key-file", e.pki.ServingKey,
		"--leader-elect=false",
	}
}

// startControllerManager runs every default controller. It signs ServiceAccount
// tokens with the API server's key and publishes the CA as kube-root-ca.crt.
func (e *Env) startControllerManager(port int) (*Process, error) {
	flexDir := filepath.Join(e.Dir, "flexvolume")
	if err := os.MkdirAll(flexDir, 0o755); err != nil {
		return nil, err
	}
	args := append(e.kubeClientFlags(port),
		"--controllers", "*",
		"--service-account-private-key-file", e.pki.SAKey,
		"--root-ca-file", e.pki.CAFile,
		// Default is under /usr/libexec, which a test must not write to.
		"--flex-volume-plugin-dir", flexDir,
		// The PV binder reacts to events anyway; a short resync makes it retry
		// claims that a test's storage simulator changed behind its back promptly.
		"--pvclaimbinder-sync-period", "2s",
	)
	// Tests create objects in bursts; the default 20 QPS would throttle the
	// controllers rather than exercise them.
	args = append(args, e.clientRateFlags(100)...)
	return e.startComponent("kube-controller-manager", args)
}

// startScheduler runs kube-scheduler. A Pod found unschedulable while its
// claim is still being bound waits for the claim's bind event; the
// scheduler of v1.34.4 was seen to miss it (make compat: four attempts
// within 30 ms, then none for 90 s), and its safety net, the flush of Pods
// unschedulable for longer than --pod-max-in-unschedulable-pods-duration
// (5 min by default, checked every 30 s), is shortened so that such a Pod
// is tried again within a test's wait. Every version from 1.30 accepts the
// flag (deprecated, not removed).
func (e *Env) startScheduler(port int) (*Process, error) {
	args := append(e.kubeClientFlags(port), e.clientRateFlags(0)...)
	args = append(args, "--pod-max-in-unschedulable-pods-duration", "10s")
	return e.startComponent("kube-scheduler", args)
}

// clientRateFlags are --kube-api-qps/--kube-api-burst from Options.ClientQPS,
// or from def when that is zero; none when both are zero (the component's
// own default).
func (e *Env) clientRateFlags(def int) []string {
	qps := cmp.Or(e.opts.ClientQPS, def)
	if qps <= 0 {
		return nil
	}
	return []string{"--kube-api-qps", strconv.Itoa(qps), "--kube-api-burst", strconv.Itoa(2 * qps)}
}

// kwok annotation that marks the Nodes kwok plays the kubelet for.
const (
	kwokAnnotation = "kwok.x-k8s.io/node"
	kwokNodeName   = "kwok-node-0"
)

// startKwok runs kwok for Nodes annotated kwok.x-k8s.io/node=fake. Pod IPs come from
// a range apart from the Service range. --node-lease-duration-seconds makes kwok renew
// a node Lease: without one, the node lifecycle controller marks the Node NotReady
// after ~40 s and every Pod Ready=False. HOME points into Dir so a developer's
// ~/.kwok/kwok.yaml is not loaded on top of the stages.
func (e *Env) startKwok(port int) (*Process, error) {
	home := filepath.Join(e.Dir, "kwok-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	return e.startComponent("kwok", []string{
		"--kubeconfig", e.Kubeconfig,
		"-c", filepath.Join(e.BinDir, stagesFile),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", kwokAnnotation + "=fake",
		"--node-lease-duration-seconds", "40",
		"--cidr", "10.244.0.0/16",
		"--node-ip", "10.243.0.1",
		"--server-address", "127.0.0.1:" + strconv.Itoa(port),
	}, "HOME="+home)
}

// createKwokNode registers the fake Node. kwok's node-initialize stage fills in its
// status (capacity, addresses, conditions), as a kubelet would.
func createKwokNode(ctx context.Context, c kubernetes.Interface) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        kwokNodeName,
		Annotations: map[string]string{kwokAnnotation: "fake"},
		Labels: map[string]string{
			"kubernetes.io/hostname": kwokNodeName,
			"kubernetes.io/os":       "linux",
			"type":                   "kwok",
		},
	}}
	_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// nodeSchedulable is true once the Node is Ready and the node lifecycle controller
// has lifted its node.kubernetes.io/* taints, so the first Pods of a test schedule at
// once instead of waiting in the scheduler's unschedulable queue.
func nodeSchedulable(ctx context.Context, c kubernetes.Interface) error {
	node, err := c.CoreV1().Nodes().Get(ctx, kwokNodeName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return fmt.Errorf("node %s not Ready yet", kwokNodeName)
	}
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectPreferNoSchedule {
			return fmt.Errorf("node %s still tainted %s:%s", kwokNodeName, t.Key, t.Effect)
		}
	}
	return nil
}
