#!/usr/bin/env bash
# The bundled example, end to end on a fresh machine: build kfdo, build the
# example program (tests/programs/lz.c) with clang-19, record branch stacks
# (hardware LBR where the machine has it, emulated LBR under QEMU where not),
# convert to an AutoFDO profile, rebuild with it, and judge baseline against
# the optimized build. Everything lands in work-out/example/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "example.sh: installing Rust with rustup"
  curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
cargo build --release -p kfdo
KFDO=$PWD/target/release/kfdo
OUT=${KFDO_EXAMPLE_DIR:-$PWD/work-out/example}
mkdir -p "$OUT"
CFLAGS="-O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names"
SIZE=3000000

echo "== build the baseline"
clang-19 $CFLAGS -o "$OUT/lz" tests/programs/lz.c

echo "== what this machine can record"
"$KFDO" capabilities

echo "== record the training run"
"$KFDO" record --method auto -o "$OUT/lz.data" -- "$OUT/lz" "$SIZE"

echo "== convert to an AutoFDO profile (and, for reference, with llvm-profgen-19)"
"$KFDO" profile --binary "$OUT/lz" --perf-data "$OUT/lz.data" -o "$OUT/lz.afdo"
perf script -i "$OUT/lz.data" -F ip,brstack --show-mmap-events 2>/dev/null > "$OUT/lz.script"
llvm-profgen-19 --binary "$OUT/lz" --perfscript "$OUT/lz.script" -o "$OUT/lz.llvm-profgen.afdo" 2>/dev/null
if cmp -s <("$KFDO" show "$OUT/lz.afdo") <("$KFDO" show "$OUT/lz.llvm-profgen.afdo"); then
  echo "kfdo's profile equals llvm-profgen-19's"
else
  echo "kfdo's profile differs from llvm-profgen-19's (see $OUT)"
fi
"$KFDO" show "$OUT/lz.afdo" | head -12

echo "== rebuild with the profile"
clang-19 $CFLAGS -fprofile-sample-use="$OUT/lz.afdo" -o "$OUT/lz.autofdo" tests/programs/lz.c

echo "== judge: baseline vs AutoFDO"
"$KFDO" compare --store "$OUT/results.db" --benchmark lz \
  --name baseline "$OUT/lz $SIZE" --name autofdo "$OUT/lz.autofdo $SIZE" \
  --runs 15 --counters cachegrind --json "$OUT/verdict.json"
"$KFDO" report --store "$OUT/results.db" -o "$OUT/report"
echo "report: $OUT/report/index.html"
