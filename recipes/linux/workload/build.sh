#!/usr/bin/env bash
# build.sh OUT_DIR [--cc CC]: builds the workload binary, OUT_DIR/kfdo-workload, static
# (it is the initramfs's /init: there is no libc to load it with). CC defaults to
# clang-19, else gcc. Prints nothing on stdout; errors and compiler messages on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
markers="$repo/crates/record/markers"

die() { echo "build.sh: $*" >&2; exit 1; }

out="" cc=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cc) [ $# -ge 2 ] || die "--cc needs a compiler"; cc=$2; shift 2 ;;
        --cc=*) cc=${1#--cc=}; shift ;;
        -h|--help) echo "usage: build.sh OUT_DIR [--cc CC]"; exit 0 ;;
        -*) die "unknown option $1 (usage: build.sh OUT_DIR [--cc CC])" ;;
        *) [ -z "$out" ] || die "one OUT_DIR only"; out=$1; shift ;;
    esac
done
[ -n "$out" ] || die "usage: build.sh OUT_DIR [--cc CC]"
if [ -z "$cc" ]; then
    if command -v clang-19 >/dev/null 2>&1; then cc=clang-19
    elif command -v gcc >/dev/null 2>&1; then cc=gcc
    else die "no compiler: install clang-19 or gcc, or pass --cc"; fi
fi
command -v "$cc" >/dev/null 2>&1 || die "compiler '$cc' not found"
[ -f "$markers/kfdo_markers.h" ] || die "no $markers/kfdo_markers.h"

mkdir -p "$out"
objs=$(mktemp -d "${TMPDIR:-/tmp}/kfdo-workload-build.XXXXXX")
trap 'rm -rf "$objs"' EXIT

# -ffile-prefix-map: the debug info names paths relative to the repository, so that
# the binary (and the initramfs holding it) is the same whatever the checkout's path.
cflags=(-std=c11 -O2 -g -Wall -Wextra -I"$markers" "-ffile-prefix-map=$repo/=")

# Compiled from the source directory with relative names, one object per file.
cd "$here"
for src in src/*.c; do
    obj="$objs/$(basename "${src%.c}").o"
    "$cc" "${cflags[@]}" -c "$src" -o "$obj" || die "compiling $src with $cc failed"
done

# Linked on its own, so that a failure here can only be the static link.
if ! "$cc" -static -g -o "$objs/kfdo-workload" "$objs"/*.o 2>"$objs/link.log"; then
    cat "$objs/link.log" >&2
    die "static linking with $cc failed: install the static C library (Debian: apt-get install libc6-dev)"
fi
# A toolchain that quietly made a dynamic binary would give a kernel that cannot run /init.
if command -v readelf >/dev/null 2>&1 && readelf -l "$objs/kfdo-workload" | grep -q 'INTERP'; then
    die "$cc -static made a dynamically linked binary"
fi
mv -f "$objs/kfdo-workload" "$out/kfdo-workload"
