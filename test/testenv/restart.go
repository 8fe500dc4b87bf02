package testenv

import (
	"context"
	"fmt"
	"time"
)

// StopAPIServer SIGKILLs kube-apiserver, as a crashed control-plane node
// ends it, and leaves it down until StartAPIServer: clients see a
// connection refused, as from a cluster that is unreachable.
func (e *Env) StopAPIServer() error {
	e.procMu.Lock()
	defer e.procMu.Unlock()
	return e.apiserver.Kill()
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the
// same port with the same certificates and etcd, and waits until /readyz
// answers.
func (e *Env) StartAPIServer(ctx context.Context) error {
	p, err := e.startAPIServer(e.apiPort)
	if err != nil {
		return fmt.Errorf("testenv: start kube-apiserver: %w", err)
	}
	e.procMu.Lock()
	e.apiserver = p
	e.procMu.Unlock()
	if err := e.poll(ctx, p, e.apiServerReady); err != nil {
		return fmt.Errorf("testenv: start kube-apiserver: %w", err)
	}
	return nil
}

// RestartAPIServer SIGKILLs kube-apiserver, as a crashed or rebooted
// control-plane node ends it, and starts it again on the same port with the
// same certificates and etcd; it returns how long the API was unavailable
// once /readyz answers again. The other components and every client
// reconnect on their own: that is what a test of a restart looks at.
func (e *Env) RestartAPIServer(ctx context.Context) (time.Duration, error) {
	began := time.Now()
	if err := e.StopAPIServer(); err != nil {
		return 0, err
	}
	if err := e.StartAPIServer(ctx); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// RestartEtcd SIGKILLs etcd and starts it again on the same ports and data
// (which --unsafe-no-fsync loses only with the machine, not with the
// process); it returns how long until the API server's /readyz answers
// again, which it does once it reached etcd anew.
func (e *Env) RestartEtcd(ctx context.Context) (time.Duration, error) {
	began := time.Now()
	if err := e.etcd.Kill(); err != nil {
		return 0, err
	}
	p, err := e.startEtcd(e.etcdPorts[0], e.etcdPorts[1], true)
	if err != nil {
		return 0, fmt.Errorf("testenv: restart etcd: %w", err)
	}
	e.procMu.Lock()
	e.etcd = p
	e.procMu.Unlock()
	if err := e.poll(ctx, p, e.etcdReady); err != nil {
		return 0, fmt.Errorf("testenv: restart etcd: %w", err)
	}
	if err := e.poll(ctx, e.apiserver, e.apiServerReady); err != nil {
		return 0, fmt.Errorf("testenv: kube-apiserver after the etcd restart: %w", err)
	}
	return time.Since(began), nil
}
