#!/usr/bin/env bash
# Installs the Debian packages kfdo and its tests need, only those missing.
# Idempotent: a second run installs nothing and says so.
#
#   bash scripts/install-deps.sh            # everything the tests use (README's test command)
#   bash scripts/install-deps.sh --example  # what the bundled example uses, no more
set -euo pipefail

scope=all
case "${1:-}" in
  --example) scope=example ;;
  "") ;;
  *) echo "install-deps: unknown argument '$1' (use --example, or nothing for all)" >&2; exit 2 ;;
esac

# What `kfdo optimize recipes/sqlite3` runs: clang-19 and its tools (instrumented PGO's
# runtime in libclang-rt), the emulated recording and counters (qemu-user; perf's file
# format), Debian's source package (dpkg-source) and sqlite3's amalgamation (tclsh, make);
# curl installs Rust where it is missing (and the fleet_loop test reads the object store
# with curl's SigV4, an S3 client apart from kfdo's); gcc is the `cc` that sqlite3's
# configure and the Rust build's C parts (SQLite in rusqlite) call.
EXAMPLE_PACKAGES=(clang-19 lld-19 llvm-19 linux-perf qemu-user libclang-rt-19-dev
                  pkg-config dpkg-dev tcl make time curl gcc)

PACKAGES=("${EXAMPLE_PACKAGES[@]}" bolt-19 qemu-system-x86 valgrind
          # The report tests look at kfdo's HTML in headless Chromium.
          chromium
          # LLVM 22 beside 19 (Debian 12's bookworm-security suite): `--llvm 22` and
          # `compiler = "clang-22"` run every LLVM tool of a step from it
          # (kfdo_toolchain::Llvm::KNOWN; Llvm::packages names these).
          clang-22 lld-22 llvm-22 bolt-22 libclang-rt-22-dev llvm-22-linker-tools
          # LLVM's gold plugin: the final link of a ThinLTO User-Mode Linux twin (GNU ld
          # reads the one bitcode object kbuild compiles after the LTO step); clang-19
          # pulls it in today, named here because kfdo calls it by path.
          llvm-19-linker-tools
          # GCC AutoFDO: both releases whose profile format kfdo writes, and AutoFDO's
          # create_gcov, the reference the gcov writer is compared with.
          g++ gcc-11 g++-11 autofdo
          # The benches' arithmetic.
          bc
          # Kernel builds (the test kernel, the kernel recipes): kbuild's host tools, and
          # what `make bindeb-pkg` / `make binrpm-pkg` run (its dpkg-checkbuilddeps asks
          # for kmod and rsync by name).
          flex bison libelf-dev libssl-dev cpio rpm fakeroot debhelper libdw-dev kmod rsync
          # aarch64: Debian's cross sysroot (clang-19 --target=aarch64-linux-gnu links
          # against it; qemu-aarch64 -L /usr/aarch64-linux-gnu runs the result), and
          # qemu-system-aarch64 for arm64 kernels.
          gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
          # The fleet Spark job (fleet/merge_raw.py): Spark 3.5 runs on Java 17; its
          # pyspark venv is made by install-pyspark.sh below.
          openjdk-17-jre-headless python3-venv
          # systemd-analyze: the test of the shipped kfdo-collect.service unit.
          systemd)

if [ "$scope" = example ]; then
  PACKAGES=("${EXAMPLE_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "install-deps: done"
fi

# The example ends here: the fleet loop's Spark job and object store are the tests'.
[ "$scope" = example ] && exit 0

# The fleet Spark job's Python environment (a venv with pinned pyspark[sql]).
bash "$(dirname "$0")/install-pyspark.sh"

# The S3-compatible object store of the fleet loop's tests and example (SeaweedFS, built
# from the Go module proxy; scripts/seaweedfs.sh starts it).
bash "$(dirname "$0")/install-seaweedfs.sh"
