#!/usr/bin/env bash
# Benchmark: `kfdo profile` against the reference pipeline on >= 2 million LBR
# samples, measured side by side in one run (interleaved rounds, medians).
#
#   bash benches/profile_speed.sh [ROUNDS] [LZ_SIZE]
#
# Input: lz (tests/programs/lz.c, clang-19 -O2 -g ...) recorded with kfdo's
# emulated LBR at period 11: every sample is a full 32-entry branch stack.
# Compared (wall seconds and peak RSS of each command):
#   A  kfdo profile --perf-data               vs  B  perf script + llvm-profgen-19
#   C  kfdo profile --perf-script (text)      vs  D  llvm-profgen-19 alone (same text)
# and the two converters' profiles are checked equal. Not a test: it prints ratios.
# Every command starts with its input in the page cache (read once just before),
# so no side pays for the disk because the previous command (the reference's
# 2.7 GB temporary perf script, say) evicted it: the same warm start for all.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SIZE=${2:-2300000}
WORK=${KFDO_BENCH_DIR:-/tmp/kfdo-bench-profile}
KFDO=${KFDO_BIN:-$PWD/target/release/kfdo}
mkdir -p "$WORK"
[ -n "${KFDO_BIN:-}" ] || cargo build --release -q -p kfdo
CFLAGS="-O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names"
clang-19 $CFLAGS -o "$WORK/lz.new" tests/programs/lz.c
# Keep the old binary (and so the recording) when the build is unchanged.
if cmp -s "$WORK/lz.new" "$WORK/lz"; then rm "$WORK/lz.new"; else mv "$WORK/lz.new" "$WORK/lz"; fi

if [ ! -s "$WORK/lbr.data" ] || [ "$WORK/lbr.data" -ot "$WORK/lz" ]; then
  echo "recording lz $SIZE under emulated LBR (period 11)..."
  "$KFDO" record --method emulated --period 11 -o "$WORK/lbr.data" -- "$WORK/lz" "$SIZE" >/dev/null
  perf script -i "$WORK/lbr.data" -F ip,brstack --show-mmap-events > "$WORK/lbr.script" 2>/dev/null
fi
SAMPLES=$(grep -vc PERF_RECORD "$WORK/lbr.script")
echo "input: $SAMPLES LBR samples; perf.data $(du -h "$WORK/lbr.data" | cut -f1), perf script text $(du -h "$WORK/lbr.script" | cut -f1)"
[ "$SAMPLES" -ge 2000000 ] || { echo "fewer than 2 million samples: raise LZ_SIZE" >&2; exit 1; }

. benches/measure.sh

warm() { cat "$1" > /dev/null; }

declare -a A B C D MA MB MC MD
for r in $(seq 1 "$ROUNDS"); do
  warm "$WORK/lbr.data"
  read -r t m < <(measure "$KFDO" -q profile --binary "$WORK/lz" --perf-data "$WORK/lbr.data" -o "$WORK/kfdo.prof")
  A+=("$t"); MA+=("$m")
  warm "$WORK/lbr.data"
  read -r t1 m1 < <(measure sh -c "perf script -i '$WORK/lbr.data' -F ip,brstack --show-mmap-events > '$WORK/round.script' 2>/dev/null")
  read -r t2 m2 < <(measure llvm-profgen-19 --binary "$WORK/lz" --perfscript "$WORK/round.script" -o "$WORK/ref.prof")
  B+=("$(python3 -c "print($t1 + $t2)")"); MB+=("$(( m1 > m2 ? m1 : m2 ))")
  rm -f "$WORK/round.script"
  warm "$WORK/lbr.script"
  read -r t m < <(measure "$KFDO" -q profile --binary "$WORK/lz" --perf-script "$WORK/lbr.script" -o "$WORK/kfdo-text.prof")
  C+=("$t"); MC+=("$m")
  warm "$WORK/lbr.script"
  read -r t m < <(measure llvm-profgen-19 --binary "$WORK/lz" --perfscript "$WORK/lbr.script" -o "$WORK/ref-text.prof")
  D+=("$t"); MD+=("$m")
  echo "round $r: A ${A[-1]}s  B ${B[-1]}s  C ${C[-1]}s  D ${D[-1]}s"
done

"$KFDO" show "$WORK/kfdo.prof" > "$WORK/kfdo.txt"
llvm-profdata-19 merge --sample --text -o "$WORK/ref.txt" "$WORK/ref.prof"
if cmp -s "$WORK/kfdo.txt" "$WORK/ref.txt"; then SAME="identical"; else SAME="DIFFERENT"; fi

python3 - "$SAMPLES" "$SAME" "${A[*]}" "${B[*]}" "${C[*]}" "${D[*]}" "${MA[*]}" "${MB[*]}" "${MC[*]}" "${MD[*]}" <<'PY'
import statistics, sys
samples, same = sys.argv[1], sys.argv[2]
A, B, C, D, MA, MB, MC, MD = ([float(x) for x in s.split()] for s in sys.argv[3:11])
med = statistics.median
print(f"\n{samples} LBR samples, {len(A)} interleaved rounds, medians (peak RSS: max over rounds)")
print("| conversion | kfdo | reference | speed-up | kfdo peak RSS | reference peak RSS |")
print("| --- | --- | --- | --- | --- | --- |")
print(f"| perf.data -> profile: `kfdo profile --perf-data` vs `perf script` + `llvm-profgen-19` | {med(A):.2f} s | {med(B):.2f} s | {med(B)/med(A):.1f}x | {max(MA)/1024:.0f} MiB | {max(MB)/1024:.0f} MiB |")
print(f"| perf script text -> profile: `kfdo profile --perf-script` vs `llvm-profgen-19` | {med(C):.2f} s | {med(D):.2f} s | {med(D)/med(C):.1f}x | {max(MC)/1024:.0f} MiB | {max(MD)/1024:.0f} MiB |")
print(f"\nprofiles from kfdo and llvm-profgen-19: {same}")
PY
