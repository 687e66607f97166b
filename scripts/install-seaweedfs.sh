#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (Apache-2.0, an S3-compatible object store) from the Go module
# proxy into ~/.cache/kfdo/seaweedfs/weed-VERSION: the real object store that `kfdo
# collect` uploads to and `kfdo merge-raw` / the fleet Spark job read from, in the tests
# and the example (`scripts/seaweedfs.sh` starts it). Idempotent: a second run finds the
# binary and says so. Override the folder with KFDO_SEAWEEDFS_DIR.
#
# `go install ...@VERSION` refuses this module (its go.mod has replace directives), so the
# module is downloaded and built in a copy of its source, as its own main module.
set -euo pipefail

# A pseudo-version the Go module proxy serves (the project publishes no tagged module).
SEAWEEDFS_VERSION=v0.0.0-20261109003541-7506e5f91cd6
DIR="${KFDO_SEAWEEDFS_DIR:-$HOME/.cache/kfdo/seaweedfs}"
BIN="$DIR/weed-$SEAWEEDFS_VERSION"

if [ -x "$BIN" ] && "$BIN" version >/dev/null 2>&1; then
  echo "install-seaweedfs: $BIN already built"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-seaweedfs: go not found; SeaweedFS is built from source with Go 1.26 or later (https://go.dev/dl/)" >&2
  exit 1
fi

echo "install-seaweedfs: building github.com/seaweedfs/seaweedfs/weed@$SEAWEEDFS_VERSION (a few minutes, once)"
mkdir -p "$DIR"
work="$(mktemp -d "$DIR/build.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
src="$(cd "$work" && go mod download -json "github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" \
       | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$src" ] || [ ! -d "$src" ]; then
  echo "install-seaweedfs: the Go module proxy did not give github.com/seaweedfs/seaweedfs@$SEAWEEDFS_VERSION" >&2
  exit 1
fi
cp -r "$src" "$work/src"
chmod -R u+w "$work/src"
# No symbol table or DWARF: a smaller binary, and the link is quicker.
(cd "$work/src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/weed" ./weed)
mv "$work/weed" "$BIN"
echo "install-seaweedfs: done ($("$BIN" version 2>/dev/null | head -1))"
