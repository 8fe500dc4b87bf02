package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// registryCmd serves an OCI registry (go-containerregistry's, blobs on disk)
// for tests and local pushes; it prints its address once it listens.
func registryCmd(args []string) error {
	fs := flag.NewFlagSet("registry", flag.ContinueOnError)
	addr := fs.String("address", "127.0.0.1:0", "host:port to listen on")
	dir := fs.String("blobs", "", "directory of the blobs (default: memory)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := []registry.Option{registry.Logger(log.New(os.Stderr, "registry ", log.LstdFlags))}
	if *dir != "" {
		opts = append(opts, registry.WithBlobHandler(registry.NewDiskBlobHandler(*dir)))
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println(l.Addr())
	srv := &http.Server{Handler: registry.New(opts...)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// pushCmd pushes the index of an OCI layout to a registry and prints the
// digest reference it is pinned by.
func pushCmd(args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	dir := fs.String("layout", "", "OCI layout directory written by release image")
	to := fs.String("to", "", "image reference, e.g. ghcr.io/claimwarden/claimwarden:v0.1.0")
	insecure := fs.Bool("insecure", false, "plain HTTP (a registry on 127.0.0.1)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := required(fs, "layout", "to"); err != nil {
		return err
	}
	var nopts []name.Option
	if *insecure {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.ParseReference(*to, nopts...)
	if err != nil {
		return fmt.Errorf("-to %q: %w", *to, err)
	}
	p, err := layout.FromPath(*dir)
	if err != nil {
		return err
	}
	// The layout's index.json is the multi-platform index itself (layout.Write).
	idx, err := p.ImageIndex()
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("pushing to %s: %w", ref, err)
	}
	fmt.Printf("%s@%s\n", ref.Context(), digest)
	return nil
}
