#!/usr/bin/env bash
# build.sh OUT_DIR [--cc CC] [--target TRIPLE]: builds the workload binary,
# OUT_DIR/kfdo-workload, static (it is the initramfs's /init: there is no libc to load it
# with). CC defaults to clang-19, else gcc. --target cross-compiles for another
# architecture's kernel (aarch64-linux-gnu: clang gets --target=, GCC becomes
# TRIPLE-gcc..., Debian's cross compiler; both link Debian's cross sysroot). Prints
# nothing on stdout; errors and compiler messages on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
markers="$repo/crates/record/markers"

die() { echo "build.sh: $*" >&2; exit 1; }

usage="usage: build.sh OUT_DIR [--cc CC] [--target TRIPLE]"
out="" cc="" target=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cc) [ $# -ge 2 ] || die "--cc needs a compiler"; cc=$2; shift 2 ;;
        --cc=*) cc=${1#--cc=}; shift ;;
        --target) [ $# -ge 2 ] || die "--target needs a triple"; target=$2; shift 2 ;;
        --target=*) target=${1#--target=}; shift ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) die "unknown option $1 ($usage)" ;;
        *) [ -z "$out" ] || die "one OUT_DIR only"; out=$1; shift ;;
    esac
done
[ -n "$out" ] || die "$usage"
if [ -z "$cc" ]; then
    if command -v clang-19 >/dev/null 2>&1; then cc=clang-19
    elif command -v gcc >/dev/null 2>&1; then cc=gcc
    else die "no compiler: install clang-19 or gcc, or pass --cc"; fi
fi
target_flags=()
if [ -n "$target" ]; then
    case "$cc" in
        clang*) target_flags=(--target="$target") ;;
        # Debian names its cross compilers TRIPLE-gcc and TRIPLE-gcc-12.
        *) cc="$target-$cc" ;;
    esac
    [ -d "/usr/$target" ] || die "no cross sysroot /usr/$target: install it (Debian: apt-get install libc6-dev-arm64-cross gcc-aarch64-linux-gnu)"
fi
command -v "$cc" >/dev/null 2>&1 || die "compiler '$cc' not found"
[ -f "$markers/kfdo_markers.h" ] || die "no $markers/kfdo_markers.h"

mkdir -p "$out"
objs=$(mktemp -d "${TMPDIR:-/tmp}/kfdo-workload-build.XXXXXX")
trap 'rm -rf "$objs"' EXIT

# -ffile-prefix-map: the debug info names paths relative to the repository, so that
# the binary (and the initramfs holding it) is the same whatever the checkout's path.
cflags=(${target_flags[@]+"${target_flags[@]}"} -std=c11 -O2 -g -Wall -Wextra -I"$markers"
        "-ffile-prefix-map=$repo/=")

# Compiled from the source directory with relative names, one object per file.
cd "$here"
for src in src/*.c; do
    obj="$objs/$(basename "${src%.c}").o"
    "$cc" "${cflags[@]}" -c "$src" -o "$obj" || die "compiling $src with $cc failed"
done

# Linked on its own, so that a failure here can only be the static link.
if ! "$cc" ${target_flags[@]+"${target_flags[@]}"} -static -g -o "$objs/kfdo-workload" "$objs"/*.o 2>"$objs/link.log"; then
    cat "$objs/link.log" >&2
    die "static linking with $cc failed: install the static C library (Debian: apt-get install libc6-dev)"
fi
# A toolchain that quietly made a dynamic binary would give a kernel that cannot run /init.
if command -v readelf >/dev/null 2>&1 && readelf -l "$objs/kfdo-workload" | grep -q 'INTERP'; then
    die "$cc -static made a dynamically linked binary"
fi
mv -f "$objs/kfdo-workload" "$out/kfdo-workload"
