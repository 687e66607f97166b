#!/usr/bin/env bash
# Downloads a Debian binary package (for example the kernel source `linux-source-7.2`,
# which only Debian's newer suites have) into a cache directory, using an apt
# configuration of its own: the system's apt sources, lists and caches are never read
# or written. apt checks the download against the suite's Release file, signed by
# Debian's archive key, and the package's SHA256 in the signed index.
#
#   scripts/fetch-debian-binary.sh PACKAGE [SUITE] [CACHE_DIR]
#
# Prints, on stdout, three lines: the path of the .deb, its version, and its SHA256
# (as apt's signed index gives it), e.g.
#   { read -r deb; read -r version; read -r sha; } < <(scripts/fetch-debian-binary.sh linux-source-7.2 unstable)
#
# SUITE defaults to unstable; CACHE_DIR to $KFDO_DEBIAN_CACHE, else
# ~/.cache/kfdo/debian-binary. Idempotent: a package already downloaded at the index's
# current version is not fetched again. Safe to run concurrently (one flock per cache).
#
# Environment: KFDO_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 3 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
pkg="$1"
suite="${2:-unstable}"
case "$pkg" in
  *[!a-z0-9.+-]* | "" ) echo "fetch-debian-binary: '$pkg' is not a Debian package name" >&2; exit 2 ;;
esac
case "$suite" in
  *[!a-z0-9-]* | "" ) echo "fetch-debian-binary: '$suite' is not a Debian suite name" >&2; exit 2 ;;
esac
cache="${3:-${KFDO_DEBIAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfdo/debian-binary}}"
mirror="${KFDO_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# shellcheck source=lib/isolated-apt.sh
. "$(dirname "$0")/lib/isolated-apt.sh"
isolated_apt_check_tools apt-cache dpkg-deb flock sha256sum

mkdir -p "$cache/$suite"
cache="$(cd "$cache" && pwd)"
exec 9>"$cache/.lock"
flock 9

aptroot="$cache/$suite/.apt"
isolated_apt_setup "$aptroot" "deb [signed-by=$keyring] $mirror $suite main"
apt_opts+=(-o "APT::Architecture=amd64" -o "APT::Architectures=amd64,all")
isolated_apt_update "$aptroot"

show="$(apt-cache "${apt_opts[@]}" show --no-all-versions "$pkg" 2>/dev/null || true)"
version="$(printf '%s\n' "$show" | sed -n 's/^Version: //p' | head -n1)"
sha="$(printf '%s\n' "$show" | sed -n 's/^SHA256: //p' | head -n1)"
if [ -z "$version" ] || [ -z "$sha" ]; then
  echo "fetch-debian-binary: $suite has no package '$pkg' (check the name: apt-cache search linux-source)" >&2
  exit 1
fi
dir="$cache/$suite/$pkg"
mkdir -p "$dir"
deb="$(ls "$dir"/"${pkg}_${version//:/%3a}"_*.deb 2>/dev/null | head -n1 || true)"
if [ -n "$deb" ] && [ "$(sha256sum "$deb" | cut -d' ' -f1)" = "$sha" ]; then
  echo "fetch-debian-binary: $pkg $version already in $deb" >&2
else
  work="$(mktemp -d "$dir/.work.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "fetch-debian-binary: downloading $pkg $version from $suite" >&2
  (cd "$work" && apt-get "${apt_opts[@]}" -qq download "$pkg=$version" >&2)
  got="$(ls "$work"/*.deb 2>/dev/null | head -n1 || true)"
  if [ -z "$got" ]; then
    echo "fetch-debian-binary: apt-get download $pkg gave no .deb" >&2
    exit 1
  fi
  # apt verified it against the signed index; check once more that it is the one listed.
  if [ "$(sha256sum "$got" | cut -d' ' -f1)" != "$sha" ]; then
    echo "fetch-debian-binary: $got does not have the SHA256 the signed index lists ($sha)" >&2
    exit 1
  fi
  rm -f "$dir"/*.deb
  mv "$got" "$dir/"
  deb="$dir/$(basename "$got")"
fi
printf '%s\n%s\n%s\n' "$deb" "$version" "$sha"
