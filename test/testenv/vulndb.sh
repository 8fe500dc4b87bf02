#!/usr/bin/env bash
# Prints the path of an offline Go vulnerability database for govulncheck
# (-db file://...), building it once into the cache. Only the Go module proxy is
# reachable from CI, so the database comes from the golang.org/x/vulndb module
# (its data/osv holds every report) indexed by that module's own indexdb
# command. Pinned: bump VULNDB_VERSION to take newer reports.
set -euo pipefail

VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
CACHE=${TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/claimwarden/testenv}
db="$CACHE/vulndb-$VULNDB_VERSION"

if [[ ! -f $db/index/db.json ]]; then
	printf '[vulndb] indexing golang.org/x/vulndb %s (cached afterwards in %s)\n' "$VULNDB_VERSION" "$db" >&2
	src=$(GOFLAGS= go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	# mktemp beside the destination, renamed when complete: a concurrent or
	# interrupted run never leaves a half-written database behind.
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$db.tmp.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	GOFLAGS= go run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$tmp/db" >&2
	mv -T "$tmp/db" "$db" 2>/dev/null || [[ -f $db/index/db.json ]]
fi
printf '%s\n' "$db"
