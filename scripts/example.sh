#!/usr/bin/env bash
# The bundled default example, end to end on a fresh machine: install what is
# missing, build kfdo, then `kfdo optimize` the sqlite3 recipe: SQLite's
# speedtest1 from Debian's source package, built as baseline, AutoFDO (kfdo's
# profile and llvm-profgen-19's), instrumented PGO and AutoFDO+ThinLTO; the
# training run recorded with hardware LBR where the CPU has it and emulated
# LBR under QEMU where not; every build benchmarked interleaved and judged.
# Everything lands in work-out/sqlite3/ (report/index.html, summary.md).
# A first argument naming a bundled recipe runs that one instead (`bash
# scripts/example.sh sqlite3-aarch64`: the same program built for aarch64 and judged
# under qemu-aarch64, into work-out/sqlite3-aarch64/). Extra arguments go to kfdo
# optimize (e.g. --runs 20, --variants autofdo).
set -euo pipefail
cd "$(dirname "$0")/.."
RECIPE=sqlite3
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  if [ ! -f "recipes/$1/recipe.toml" ]; then
    echo "example.sh: no recipe recipes/$1/recipe.toml (bundled: $(ls recipes | grep -v README | tr '\n' ' '))" >&2
    exit 2
  fi
  RECIPE=$1
  shift
fi
. scripts/lib/bootstrap.sh
# Only what the example runs: the tests' packages (LLVM 22, GCC, kernel builds, Java and
# Spark, the object store) are test.sh's to install.
if [ "$RECIPE" = sqlite3 ]; then
  kfdo_bootstrap example.sh --example
else
  kfdo_bootstrap example.sh
fi
cargo build --release -p kfdo
KFDO=${CARGO_TARGET_DIR:-$PWD/target}/release/kfdo
OUT=${KFDO_EXAMPLE_DIR:-$PWD/work-out/$RECIPE}

echo "== what this machine can record"
"$KFDO" capabilities

echo "== kfdo optimize recipes/$RECIPE/recipe.toml -> $OUT"
"$KFDO" optimize "recipes/$RECIPE/recipe.toml" -o "$OUT" "$@"
