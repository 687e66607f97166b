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
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

for tool in apt-get dpkg-source flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch-debian-source: '$tool' not found (install: apt-get install dpkg-dev util-linux apt)" >&2
    exit 1
  fi
done
if [ ! -r "$keyring" ]; then
  echo "fetch-debian-source: $keyring missing (install: apt-get install debian-archive-keyring)" >&2
  exit 1
fi

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

# The isolated apt root: its own sources list (deb-src only), lists, caches and
# an empty dpkg status, so nothing here depends on or changes the system's apt.
aptroot="$cache/$suite/.apt"
mkdir -p "$aptroot/etc/sources.list.d" "$aptroot/etc/preferences.d" \
         "$aptroot/state/lists/partial" "$aptroot/cache/archives/partial"
touch "$aptroot/state/status"
cat >"$aptroot/etc/sources.list" <<EOF
deb-src [signed-by=$keyring] $mirror $suite main
EOF
apt_opts=(
  -o "Dir::Etc::SourceList=$aptroot/etc/sources.list"
  -o "Dir::Etc::SourceParts=$aptroot/etc/sources.list.d"
  -o "Dir::Etc::Preferences=$aptroot/etc/preferences"
  -o "Dir::Etc::PreferencesParts=$aptroot/etc/preferences.d"
  -o "Dir::State=$aptroot/state"
  -o "Dir::State::Lists=$aptroot/state/lists"
  -o "Dir::State::status=$aptroot/state/status"
  -o "Dir::Cache=$aptroot/cache"
  -o "Dir::Cache::pkgcache="
  -o "Dir::Cache::srcpkgcache="
  -o "APT::Sandbox::User=root"
  -o "Debug::NoLocking=1"
)

# Refresh the index once a day at most.
lists_stamp="$aptroot/state/.updated"
if [ ! -f "$lists_stamp" ] || [ -n "$(find "$lists_stamp" -mmin +1440 2>/dev/null)" ]; then
  echo "fetch-debian-source: updating the isolated index for $suite (deb-src $mirror)" >&2
  apt-get "${apt_opts[@]}" -qq update >&2
  touch "$lists_stamp"
fi

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
