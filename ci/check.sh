#!/usr/bin/env bash
# claimwarden check in a pull request's CI: the entry script of the GitHub
# Action (action.yml) and, verbatim, of the GitLab CI/CD component
# (templates/check.yml). It reads only environment variables:
#
#   CLAIMWARDEN_VERSION       the release to run (v1.2.3): its binary for this
#                             machine, verified against the release's checksums.txt
#   CLAIMWARDEN_RELEASES      where releases are downloaded from
#                             (default https://github.com/claimwarden/claimwarden/releases/download)
#   CLAIMWARDEN_FILES         the proposed manifests, files or directories
#                             relative to the repository root, space-separated (default deploy/)
#   CLAIMWARDEN_ARGS          more check flags (--policy DIR, --param k=v, ...), word-split
#   CLAIMWARDEN_BASE_REF      the target branch: its manifests are the base
#   CLAIMWARDEN_REPOSITORY, CLAIMWARDEN_REVISION, CLAIMWARDEN_PR, CLAIMWARDEN_TARGET_URL,
#   CLAIMWARDEN_GIT_HOST_TYPE the pull request, for the commit statuses and the comment
#   CLAIMWARDEN_GIT_TOKEN     the Git host token (never on a command line)
#   CLAIMWARDEN_POST_STATUS, CLAIMWARDEN_COMMENT   "true" to post them
#   CLAIMWARDEN_SARIF, CLAIMWARDEN_JUNIT           files to write those reports to
#   CLAIMWARDEN_ANNOTATIONS   "github" to print GitHub Actions annotations
#
# Exit code: check's (0 allowed, 1 denied, 2 could not check), 2 as well when
# the binary cannot be fetched or does not match its checksum.
set -euo pipefail

: "${CLAIMWARDEN_VERSION:?set CLAIMWARDEN_VERSION to a release, e.g. v1.2.3}"
: "${CLAIMWARDEN_BASE_REF:?set CLAIMWARDEN_BASE_REF to the target branch of the pull request}"
releases=${CLAIMWARDEN_RELEASES:-https://github.com/claimwarden/claimwarden/releases/download}
read -r -a files <<<"${CLAIMWARDEN_FILES:-deploy/}"
read -r -a extra <<<"${CLAIMWARDEN_ARGS:-}"

fail() {
	echo "claimwarden: $*" >&2
	exit 2
}

case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no release binary for $(uname -m)" ;;
esac
binary=claimwarden-linux-$arch
work=$(mktemp -d)
trap 'git worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

curl -fsSL --retry 3 -o "$work/checksums.txt" "$releases/$CLAIMWARDEN_VERSION/checksums.txt" ||
	fail "cannot download $releases/$CLAIMWARDEN_VERSION/checksums.txt"
curl -fsSL --retry 3 -o "$work/$binary" "$releases/$CLAIMWARDEN_VERSION/$binary" ||
	fail "cannot download $releases/$CLAIMWARDEN_VERSION/$binary"
grep -E "^[0-9a-f]{64}  $binary\$" "$work/checksums.txt" >"$work/$binary.sha256" ||
	fail "checksums.txt of $CLAIMWARDEN_VERSION lists no $binary"
(cd "$work" && sha256sum --check --status "$binary.sha256") ||
	fail "$binary does not match its checksum in checksums.txt of $CLAIMWARDEN_VERSION: not run"
chmod +x "$work/$binary"
claimwarden=("$work/$binary")

# The target branch's manifests, beside the pull request's.
git fetch --quiet --no-tags origin "+refs/heads/$CLAIMWARDEN_BASE_REF:refs/remotes/origin/$CLAIMWARDEN_BASE_REF" ||
	fail "cannot fetch the target branch $CLAIMWARDEN_BASE_REF"
git worktree add --quiet --detach "$work/base" "origin/$CLAIMWARDEN_BASE_REF" >/dev/null ||
	fail "cannot check out the target branch $CLAIMWARDEN_BASE_REF"
args=()
for f in "${files[@]}"; do
	args+=(-f "$f" --base "$work/base/$f")
done
args+=("${extra[@]}")

# The reports: a denial (exit code 1) is the last run's to report.
report() {
	local code=0
	"${claimwarden[@]}" check "${args[@]}" "$@" || code=$?
	[[ $code -le 1 ]] || exit "$code"
}
if [[ -n ${CLAIMWARDEN_SARIF:-} ]]; then
	report -o sarif >"$CLAIMWARDEN_SARIF"
fi
if [[ -n ${CLAIMWARDEN_JUNIT:-} ]]; then
	report -o junit >"$CLAIMWARDEN_JUNIT"
fi
output=()
if [[ ${CLAIMWARDEN_ANNOTATIONS:-} == github ]]; then
	output=(-o github)
fi

post=()
if [[ ${CLAIMWARDEN_POST_STATUS:-} == true ]]; then
	post+=(--post-status --revision "${CLAIMWARDEN_REVISION:?set CLAIMWARDEN_REVISION to post statuses}")
	if [[ -n ${CLAIMWARDEN_TARGET_URL:-} ]]; then
		post+=(--git-status-target-url "$CLAIMWARDEN_TARGET_URL")
	fi
fi
if [[ ${CLAIMWARDEN_COMMENT:-} == true ]]; then
	post+=(--comment --pr "${CLAIMWARDEN_PR:?set CLAIMWARDEN_PR to comment}")
fi
if [[ ${#post[@]} -gt 0 ]]; then
	post+=(--repository "${CLAIMWARDEN_REPOSITORY:?set CLAIMWARDEN_REPOSITORY to post}")
	if [[ -n ${CLAIMWARDEN_GIT_HOST_TYPE:-} ]]; then
		post+=(--git-host-type "$CLAIMWARDEN_GIT_HOST_TYPE")
	fi
fi
code=0
"${claimwarden[@]}" check "${args[@]}" "${output[@]}" "${post[@]}" || code=$?
exit "$code"
