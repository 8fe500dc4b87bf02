package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// profileBump starts a CPU profile of the controller for -profile-seconds
// and writes it to -profile; the channel says how it ended (nil at once
// without -profile). A MISSED target is explained by what the controller
// spent its CPU on (go tool pprof -top BINARY FILE).
func (r *runner) profileBump(ctx context.Context) <-chan error {
	done := make(chan error, 1)
	if r.o.profile == "" {
		done <- nil
		return done
	}
	go func() {
		done <- r.writeProfile(ctx)
	}()
	return done
}

func (r *runner) writeProfile(ctx context.Context) error {
	secs := r.o.profileSeconds
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+time.Minute)
	defer cancel()
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", r.pprofAddr, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	out := tierOut(r.o.profile, r.o.tier, r.o.tiers)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	r.logf("CPU profile of the controller's first %ds of the bump: %s", secs, out)
	return f.Close()
}
