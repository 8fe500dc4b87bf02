#!/usr/bin/env bash
# `make release VERSION=vX.Y.Z` after `make image`: writes into $DIST
#   install.yaml                 config/default with the image pinned by digest
#   claimwarden-X.Y.Z.tgz        the Helm chart, image pinned by digest
#   claimwarden-linux-ARCH       the Linux binaries `make image` built
#   checksums.txt                SHA-256 of every artifact
# and, when COSIGN_KEY is set, cosign signatures (.sigstore.json bundles) of
# checksums.txt and the chart, and of the image and chart in REGISTRY when
# they are pushed there. Nothing reaches the internet: signatures are not
# uploaded to a transparency log (--tlog-upload=false); verify them with the
# public key (docs/versioning.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TESTENV="$ROOT/bin/testenv"
: "${VERSION:?}" "${IMAGE_REPO:?}" "${DIST:?}"
COSIGN_KEY=${COSIGN_KEY:-} REGISTRY=${REGISTRY:-} INSECURE=${INSECURE:-}

if [[ ! $VERSION =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]]; then
	echo "release: VERSION=$VERSION is not a semantic version vMAJOR.MINOR.PATCH[-PRERELEASE]" >&2
	exit 1
fi
digest=$(cat "$DIST/image.digest")
chart_version=${VERSION#v}

# install.yaml: an overlay of config/default that only pins the image.
overlay=$(mktemp -d "$DIST/overlay.XXXXXX")
trap 'rm -rf "$overlay"' EXIT
base=$(realpath --relative-to="$overlay" "$ROOT/config/default")
cat >"$overlay/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $base
images:
- name: ghcr.io/claimwarden/claimwarden
  newName: $IMAGE_REPO
  digest: $digest
labels:
- pairs:
    app.kubernetes.io/version: $VERSION
    app.kubernetes.io/part-of: claimwarden
YAML
"$TESTENV/release" kustomize "$overlay" >"$DIST/install.yaml"

# The chart, its symlinks to config/ resolved, the image pinned in its values.
cp -rL "$ROOT/config/helm/claimwarden" "$overlay/claimwarden"
sed -i "s|^  repository: ghcr.io/claimwarden/claimwarden\$|  repository: $IMAGE_REPO|; s|^  digest: \"\"\$|  digest: \"$digest\"|" "$overlay/claimwarden/values.yaml"
grep -q "digest: \"$digest\"" "$overlay/claimwarden/values.yaml" || { echo "release: could not pin the digest in the chart's values.yaml" >&2; exit 1; }
rm -f "$DIST"/claimwarden-*.tgz
"$TESTENV/helm" package "$overlay/claimwarden" --version "$chart_version" --app-version "$VERSION" -d "$DIST" >/dev/null
chart="claimwarden-$chart_version.tgz"

# The Linux binaries, which the GitHub Action and the GitLab component
# (ci/check.sh) download and verify against checksums.txt.
binaries=()
for b in "$DIST"/bin/linux-*/claimwarden; do
	[[ -e $b ]] || continue
	name="claimwarden-$(basename "$(dirname "$b")")"
	cp "$b" "$DIST/$name"
	binaries+=("$name")
done

(cd "$DIST" && sha256sum install.yaml "$chart" "${binaries[@]}" claimwarden-*.spdx.json claimwarden-image.oci.tar >checksums.txt)

chart_ref=""
if [[ -n $REGISTRY ]]; then
	plain=(); [[ -n $INSECURE ]] && plain=(--plain-http)
	chart_ref=$("$TESTENV/helm" push "${plain[@]}" "$DIST/$chart" "oci://$REGISTRY/charts" 2>&1 | sed -n 's/^Digest: //p')
	echo "chart oci://$REGISTRY/charts/claimwarden:$chart_version@$chart_ref"
fi

if [[ -n $COSIGN_KEY ]]; then
	bash "$ROOT/test/testenv/tools.sh" cosign
	cosign=("$TESTENV/cosign")
	flags=(--key "$COSIGN_KEY" --tlog-upload=false --use-signing-config=false --yes)
	for f in checksums.txt "$chart"; do
		"${cosign[@]}" sign-blob "${flags[@]}" --bundle "$DIST/$f.sigstore.json" "$DIST/$f" >/dev/null
	done
	if [[ -n $REGISTRY ]]; then
		insecure=(); [[ -n $INSECURE ]] && insecure=(--allow-insecure-registry --allow-http-registry)
		"${cosign[@]}" sign "${flags[@]}" "${insecure[@]}" "$IMAGE_REPO@$digest"
		"${cosign[@]}" sign "${flags[@]}" "${insecure[@]}" "$REGISTRY/charts/claimwarden@$chart_ref"
	fi
fi
echo "release $VERSION in $DIST: install.yaml, $chart, SBOMs, checksums.txt${COSIGN_KEY:+, signatures}"
