#!/usr/bin/env bash
# build-initramfs.sh OUT.cpio.gz [--cc CC] [--target TRIPLE]: the workload's initramfs, a gzip'd newc
# cpio holding /init (kfdo-workload, built by build.sh) and the directories it mounts
# on. The same sources and compiler give the same bytes (sorted entries, owner 0:0,
# fixed mtimes, gzip -n). Written atomically. Nothing on stdout; errors on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

die() { echo "build-initramfs.sh: $*" >&2; exit 1; }

out="" cc_args=() target_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --cc) [ $# -ge 2 ] || die "--cc needs a compiler"; cc_args=(--cc "$2"); shift 2 ;;
        --cc=*) cc_args=(--cc "${1#--cc=}"); shift ;;
        --target) [ $# -ge 2 ] || die "--target needs a triple"; target_args=(--target "$2"); shift 2 ;;
        --target=*) target_args=(--target "${1#--target=}"); shift ;;
        -h|--help) echo "usage: build-initramfs.sh OUT.cpio.gz [--cc CC] [--target TRIPLE]"; exit 0 ;;
        -*) die "unknown option $1 (usage: build-initramfs.sh OUT.cpio.gz [--cc CC] [--target TRIPLE])" ;;
        *) [ -z "$out" ] || die "one output only"; out=$1; shift ;;
    esac
done
[ -n "$out" ] || die "usage: build-initramfs.sh OUT.cpio.gz [--cc CC] [--target TRIPLE]"
for tool in cpio gzip find sort touch; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found"
done

# The modes in the archive must not depend on the caller's umask.
umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/kfdo-initramfs.XXXXXX")
out_dir=$(dirname "$out")
mkdir -p "$out_dir"
tmp_out="$out_dir/.$(basename "$out").tmp.$$"
trap 'rm -rf "$work" "$tmp_out"' EXIT

bash "$here/build.sh" "$work/bin" ${cc_args[@]+"${cc_args[@]}"} \
    ${target_args[@]+"${target_args[@]}"} >&2

root="$work/root"
# /lib/modules stays empty here: kfdo appends each kernel's own modules as a second
# archive (crates/optimize/src/kernel/initramfs.rs).
mkdir -p "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/lib/modules"
chmod 1777 "$root/tmp"
install -m 0755 "$work/bin/kfdo-workload" "$root/init"
# With a /dev/console in the archive the kernel hands /init the console as fds 0-2;
# without (not root: no mknod), /init opens it on devtmpfs itself.
if [ "$(id -u)" = 0 ]; then
    mknod -m 0600 "$root/dev/console" c 5 1
fi
find "$root" -exec touch -h -d @0 {} +

repro=()
if cpio --help 2>/dev/null | grep -q -- '--reproducible'; then
    repro=(--reproducible)
fi
(
    cd "$root"
    find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 ${repro[@]+"${repro[@]}"}
) | gzip -9n >"$tmp_out"
mv -f "$tmp_out" "$out"
