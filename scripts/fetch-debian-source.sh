#!/usr/bin/env bash
# Fetches and unpacks a Debian (bookworm) source package into a cache directory,
# using an apt configuration of its own: the system's apt sources, lists and
# caches are never read or written.
#
#   scripts/fetch-debian-source.sh PACKAGE [CACHE_DIR]
#
# Prints the path of the unpacked source tree as the last line on stdout, e.g.
#   dir=$(scripts/fetch-debian-source.sh sqlite3 | tail -n1)
#   ls "$dir/test/speedtest1.c"
#
# CACHE_DIR defaults to $KFDO_SOURCE_CACHE, else ~/.cache/kfdo/debian-source.
# Idempotent: a package already unpacked there is not fetched again (the tree is
# complete when its `.kfdo-complete` stamp exists; partial work is thrown away).
# Safe to run concurrently: one flock per cache directory.
#
# Environment: KFDO_DEBIAN_MIRROR (default http://deb.debian.org/debian),
#              KFDO_DEBIAN_SUITE (default bookworm).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi

pkg="$1"
case "$pkg" in
  *[!a-z0-9.+-]* | "" ) echo "fetch-debian-source: '$pkg' is not a Debian source package name" >&2; exit 2 ;;
esac
cache="${2:-${KFDO_SOURCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfdo/debian-source}}"
mirror="${KFDO_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${KFDO_DEBIAN_SUITE:-bookworm}"
# shellcheck source=lib/isolated-apt.sh
. "$(dirname "$0")/lib/isolated-apt.sh"
isolated_apt_check_tools dpkg-source flock

mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
dest="$cache/$suite/$pkg"
stamp="$dest/.kfdo-complete"

exec 9>"$cache/.lock"
flock 9

if [ -f "$stamp" ]; then
  echo "fetch-debian-source: $pkg already in $(cat "$stamp")" >&2
  cat "$stamp"
  exit 0
fi

# The isolated apt root (deb-src only): nothing here depends on or changes the system's apt.
aptroot="$cache/$suite/.apt"
isolated_apt_setup "$aptroot" "deb-src [signed-by=$keyring] $mirror $suite main"
isolated_apt_update "$aptroot"

work="$(mktemp -d "$cache/$suite/.work-$pkg.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "fetch-debian-source: downloading source package $pkg" >&2
(cd "$work" && apt-get "${apt_opts[@]}" -qq --download-only source "$pkg" >&2)
dsc="$(ls "$work"/*.dsc 2>/dev/null | head -n1)"
if [ -z "$dsc" ]; then
  echo "fetch-debian-source: apt-get source $pkg gave no .dsc in $work" >&2
  exit 1
fi
# apt checked the files against the signed index; dpkg-source checks them
# against the .dsc again (the maintainer's signature is only warned about when
# debian-keyring is not installed).
(cd "$work" && dpkg-source -x "$(basename "$dsc")" src >&2)
# Keep the downloaded files beside the tree, for reference.
rm -rf "$dest"
mkdir -p "$dest"
mv "$work/src" "$dest/src"
mv "$work"/*.dsc "$work"/*.tar.* "$dest/" 2>/dev/null || true
echo "$dest/src" >"$stamp"
echo "fetch-debian-source: $pkg unpacked in $dest/src" >&2
cat "$stamp"
