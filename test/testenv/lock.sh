# Sourced by build.sh and tools.sh: one build of the cache at a time. Two
# `make testenv` started at once otherwise write the same <component>.tmp and
# one fails (or links a half-written binary); the second now waits for the
# first and then finds everything cached. A script run by one that holds the
# lock (tools.sh from build.sh) inherits it.
if [[ -z ${CLAIMWARDEN_TESTENV_LOCKED:-} ]]; then
	exec 9>"$CACHE/.lock"
	if ! flock -n 9; then
		printf '[testenv] waiting for another build of %s\n' "$CACHE" >&2
		flock 9
	fi
	export CLAIMWARDEN_TESTENV_LOCKED=1
fi
