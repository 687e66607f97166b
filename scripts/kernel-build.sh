#!/usr/bin/env bash
# Build a small x86_64 Linux kernel with clang-19 and an initramfs holding a static workload,
# for kfdo's kernel recording tests (issue 3, "Kernel").
#
#   scripts/kernel-build.sh            # prints the cache directory on stdout when done
#
# Outputs (in ${KFDO_KERNEL_CACHE:-$HOME/.cache/kfdo/kernel}, outside git):
#   bzImage         the kernel to boot (qemu-system-x86_64 -kernel)
#   vmlinux         the ELF with DWARF (for kfdo profile --kernel / llvm-profgen --kernel)
#   initramfs.cpio.gz   /init = testdata/kernel/workload.c built static
#
# Idempotent: the kernel is rebuilt only when the config recipe below (or the source tarball)
# changes; the initramfs only when the workload source changes. Safe to run concurrently
# (one flock per cache directory).
# Sources: Debian's linux-source-6.1 (apt-get install -y linux-source-6.1), or
# KFDO_KERNEL_SRC=/path/to/linux-source.tar.xz.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${KFDO_KERNEL_CACHE:-$HOME/.cache/kfdo/kernel}
tarball=${KFDO_KERNEL_SRC:-/usr/src/linux-source-6.1.tar.xz}
jobs=${KFDO_KERNEL_JOBS:-$(nproc)}
mkdir -p "$cache"
log() { echo "kernel-build: $*" >&2; }
# One build at a time per cache (tests and scripts may run it side by side).
exec 9>"$cache/.lock"
flock 9

if [ ! -f "$tarball" ]; then
    log "no kernel source at $tarball; installing linux-source-6.1"
    if [ "$(id -u)" = 0 ]; then apt-get install -y linux-source-6.1 >&2
    else sudo apt-get install -y linux-source-6.1 >&2; fi
fi

# The config recipe: tinyconfig plus what a serial-console initramfs workload and a
# symbolizable vmlinux need. KASLR stays on (the recorder discovers the runtime _text).
options=(
    64BIT PRINTK PRINTK_TIME TTY SERIAL_8250 SERIAL_8250_CONSOLE
    BLK_DEV_INITRD RD_GZIP BINFMT_ELF BINFMT_SCRIPT PROC_FS SYSFS DEVTMPFS DEVTMPFS_MOUNT
    TMPFS SHMEM FUTEX EPOLL SIGNALFD TIMERFD EVENTFD MULTIUSER POSIX_TIMERS
    DEBUG_KERNEL DEBUG_INFO DEBUG_INFO_DWARF5 RELOCATABLE RANDOMIZE_BASE
    PCI ACPI
)
recipe="$(sha256sum "$tarball" 2>/dev/null | cut -c1-16 || true) clang-19 tinyconfig ${options[*]}"
stamp="$cache/kernel.stamp"

if [ -f "$cache/bzImage" ] && [ -f "$cache/vmlinux" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$recipe" ]; then
    log "kernel up to date in $cache"
else
    src="$cache/src"
    if [ ! -f "$src/Makefile" ]; then
        log "unpacking $tarball"
        rm -rf "$src.tmp" && mkdir -p "$src.tmp"
        tar -xf "$tarball" -C "$src.tmp" --strip-components=1
        rm -rf "$src" && mv "$src.tmp" "$src"
    fi
    mk() { make -C "$src" LLVM=-19 ARCH=x86_64 -j"$jobs" "$@"; }
    log "configuring (tinyconfig + ${#options[@]} options)"
    mk tinyconfig >&2
    args=()
    for o in "${options[@]}"; do args+=(--enable "$o"); done
    "$src/scripts/config" --file "$src/.config" "${args[@]}" --disable DEBUG_INFO_NONE \
        --disable DEBUG_INFO_REDUCED --disable DEBUG_INFO_BTF --disable KERNEL_XZ \
        --disable KERNEL_LZ4 --enable KERNEL_GZIP
    mk olddefconfig >&2
    for o in 64BIT SERIAL_8250_CONSOLE BLK_DEV_INITRD BINFMT_ELF DEBUG_INFO_DWARF5 RANDOMIZE_BASE; do
        grep -q "^CONFIG_$o=y" "$src/.config" || { log "CONFIG_$o did not stick"; exit 1; }
    done
    log "building bzImage (clang-19, $jobs jobs)"
    start=$(date +%s)
    mk bzImage >&2
    log "built in $(( $(date +%s) - start )) s"
    cp "$src/arch/x86/boot/bzImage" "$cache/bzImage.tmp" && mv "$cache/bzImage.tmp" "$cache/bzImage"
    cp "$src/vmlinux" "$cache/vmlinux.tmp" && mv "$cache/vmlinux.tmp" "$cache/vmlinux"
    cp "$src/.config" "$cache/config"
    echo "$recipe" > "$stamp"
fi

# The initramfs: /init is the static workload; /dev/console for early output.
wsrc="$here/testdata/kernel/workload.c"
wsum=$(sha256sum "$wsrc" | cut -c1-16)
if [ -f "$cache/initramfs.cpio.gz" ] && [ "$(cat "$cache/initramfs.stamp" 2>/dev/null)" = "$wsum" ]; then
    log "initramfs up to date"
else
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    mkdir -p "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/bin"
    cc=clang-19; command -v $cc >/dev/null || cc=gcc
    $cc -O2 -g -static -o "$root/init" "$wsrc"
    cp "$root/init" "$cache/workload"
    ln -s ../init "$root/bin/workload"
    # /dev/console must exist before devtmpfs is mounted; cpio -H newc keeps device nodes.
    if mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null; then :; else log "mknod failed (not root): relying on devtmpfs"; fi
    (cd "$root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) | gzip -9 > "$cache/initramfs.cpio.gz.tmp"
    mv "$cache/initramfs.cpio.gz.tmp" "$cache/initramfs.cpio.gz"
    echo "$wsum" > "$cache/initramfs.stamp"
    log "initramfs written"
fi
echo "$cache"
