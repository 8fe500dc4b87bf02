package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// profileBump starts CPU profiles of the controller and of kube-apiserver
// for -profile-seconds and writes them to -profile and to the same name
// with "-apiserver"; the channel says how they ended (nil at once without
// -profile). A MISSED target is explained by what the two spent their CPU
// on: go tool pprof -top BINARY FILE, with the controller's binary and
// testenv's kube-apiserver.
func (r *runner) profileBump(ctx context.Context) <-chan error {
	return r.profile(ctx, "-apiserver", true)
}

// profileManual profiles kube-apiserver during the manual procedure as
// profileBump does during the bump, to "-manual-apiserver": the same
// profiler's cost in both, and what the controller's requests add is the
// difference of the two (go tool pprof -diff_base).
func (r *runner) profileManual(ctx context.Context) <-chan error {
	return r.profile(ctx, "-manual-apiserver", false)
}

func (r *runner) profile(ctx context.Context, apiSuffix string, controller bool) <-chan error {
	done := make(chan error, 1)
	if r.o.profile == "" {
		done <- nil
		return done
	}
	out := tierOut(r.o.profile, r.o.tier, r.o.tiers)
	apiOut := strings.TrimSuffix(out, filepath.Ext(out)) + apiSuffix + filepath.Ext(out)
	go func() {
		apiDone := make(chan error, 1)
		go func() {
			hc, err := rest.HTTPClientFor(r.env.Config)
			if err != nil {
				apiDone <- err
				return
			}
			apiDone <- r.writeProfile(ctx, hc, r.env.Config.Host, apiOut, "kube-apiserver")
		}()
		var err error
		if controller {
			err = r.writeProfile(ctx, http.DefaultClient, "http://"+r.pprofAddr, out, "the controller")
		}
		done <- errors.Join(err, <-apiDone)
	}()
	return done
}

// writeProfile writes the CPU profile that base/debug/pprof serves to out.
func (r *runner) writeProfile(ctx context.Context, hc *http.Client, base, out, what string) error {
	secs := r.o.profileSeconds
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+time.Minute)
	defer cancel()
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(base, "/"), secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile of %s: %s: %s", what, url, resp.Status)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	r.logf("CPU profile of %s's first %ds: %s", what, secs, out)
	return f.Close()
}
