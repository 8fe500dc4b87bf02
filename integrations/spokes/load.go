package spokes

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Load reads the Secret of each ref with reader, which should be uncached
// (the manager's API reader: a cache would watch every Secret of the
// namespace), parses it with the parser of its type, checks the result
// (check) and returns the Set. Errors name the configuration entry
// (clusters[i]) and the Secret; every entry is tried, so one start-up
// reports every bad one.
func Load(ctx context.Context, reader client.Reader, refs []Ref, parsers map[Type]Parser) (*Set, error) {
	spokes := make([]Spoke, 0, len(refs))
	var errs []error
	for i, ref := range refs {
		sp, err := load(ctx, reader, ref, parsers)
		if err != nil {
			errs = append(errs, fmt.Errorf("clusters[%d] (%s): %w", i, ref.Name, err))
			continue
		}
		spokes = append(spokes, sp)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return NewSet(spokes)
}

func load(ctx context.Context, reader client.Reader, ref Ref, parsers map[Type]Parser) (Spoke, error) {
	parse, ok := parsers[ref.Type]
	if !ok {
		return Spoke{}, fmt.Errorf("type %q has no parser", ref.Type)
	}
	var secret corev1.Secret
	if err := reader.Get(ctx, ref.Secret, &secret); err != nil {
		return Spoke{}, fmt.Errorf("reading Secret %s: %w", ref.Secret, err)
	}
	argoCDName, server, cfg, err := parse(&secret, ref.Key)
	if err != nil {
		return Spoke{}, err
	}
	server = NormalizeServer(server)
	if err := check(server, cfg); err != nil {
		return Spoke{}, fmt.Errorf("credential in Secret %s: %w", ref.Secret, err)
	}
	cfg.Host = server
	return Spoke{Name: ref.Name, Server: server, CAData: cfg.CAData, Config: cfg, ArgoCDName: argoCDName}, nil
}
