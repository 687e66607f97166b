#!/usr/bin/env bash
# Benchmark: the layout profiles, `kfdo profile --format bolt` and `--format
# propeller`, against perf2bolt-19 on the same perf.data, measured side by side in one
# run (interleaved rounds, medians, peak RSS). No LLVM 19 tool writes Propeller
# profiles (google/llvm-propeller's create_llvm_prof is not packaged), so perf2bolt,
# which does the same job for BOLT from the same samples, is the yardstick for both.
#
#   bash benches/layout_speed.sh [ROUNDS] [LZ_SIZE] [PERIOD]
#
# Input: lz (testdata/programs/lz.c, clang-19 -O2 -g -fbasic-block-address-map, non-PIE,
# linked by lld with --emit-relocs as BOLT wants) recorded with kfdo's emulated LBR:
# every sample is a full 32-entry branch stack. perf2bolt runs `perf script` itself (its
# text stage is part of its time) and disassembles every function; kfdo reads the
# perf.data and decodes only the functions with traces (BOLT) or the hot functions
# (Propeller's check of the map against the code). The two fdata files are checked
# equal (sorted). Not a test: it prints ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SIZE=${2:-300000}
PERIOD=${3:-101}
WORK=${KFDO_BENCH_DIR:-/tmp/kfdo-bench-layout}
KFDO=${KFDO_BIN:-$PWD/target/release/kfdo}
PERF2BOLT=/usr/lib/llvm-19/bin/perf2bolt
mkdir -p "$WORK"
[ -n "${KFDO_BIN:-}" ] || cargo build --release -q -p kfdo
clang-19 -O2 -g -fbasic-block-address-map -fno-pie -no-pie -fuse-ld=lld -Wl,--emit-relocs -o "$WORK/lz.new" testdata/programs/lz.c
# Keep the old binary (and so the recording) when the build is unchanged.
if cmp -s "$WORK/lz.new" "$WORK/lz"; then rm "$WORK/lz.new"; else mv "$WORK/lz.new" "$WORK/lz"; fi
if [ ! -s "$WORK/lbr.data" ] || [ "$WORK/lbr.data" -ot "$WORK/lz" ]; then
  echo "recording lz $SIZE under emulated LBR (period $PERIOD)..."
  "$KFDO" record -q --method emulated --period "$PERIOD" -o "$WORK/lbr.data" -- "$WORK/lz" "$SIZE" >/dev/null
fi
echo "input: perf.data $(du -h "$WORK/lbr.data" | cut -f1)"

. benches/measure.sh

declare -a K P R MK MP MR
for r in $(seq 1 "$ROUNDS"); do
  cat "$WORK/lbr.data" > /dev/null
  read -r t m < <(measure "$KFDO" -q profile --format bolt --binary "$WORK/lz" --perf-data "$WORK/lbr.data" -o "$WORK/kfdo.fdata")
  K+=("$t"); MK+=("$m")
  cat "$WORK/lbr.data" > /dev/null
  read -r t m < <(measure "$KFDO" -q profile --format propeller --binary "$WORK/lz" --perf-data "$WORK/lbr.data" -o "$WORK/kfdo")
  R+=("$t"); MR+=("$m")
  cat "$WORK/lbr.data" > /dev/null
  read -r t m < <(measure "$PERF2BOLT" -p "$WORK/lbr.data" -o "$WORK/perf2bolt.fdata" "$WORK/lz")
  P+=("$t"); MP+=("$m")
  echo "round $r: kfdo bolt ${K[-1]}s  kfdo propeller ${R[-1]}s  perf2bolt ${P[-1]}s"
done

if cmp -s <(sort "$WORK/kfdo.fdata") <(sort "$WORK/perf2bolt.fdata"); then SAME="identical"; else SAME="DIFFERENT"; fi
RECORDS=$(wc -l < "$WORK/kfdo.fdata")
HOT=$(grep -c '^f ' "$WORK/kfdo_cc_profile.txt")
python3 - "$RECORDS" "$SAME" "$HOT" "${K[*]}" "${P[*]}" "${R[*]}" "${MK[*]}" "${MP[*]}" "${MR[*]}" <<'PY'
import statistics, sys
records, same, hot = sys.argv[1:4]
K, P, R, MK, MP, MR = ([float(x) for x in s.split()] for s in sys.argv[4:10])
med = statistics.median
print(f"\n{len(K)} interleaved rounds, medians (peak RSS: max over rounds); ratios against perf2bolt-19")
print("| conversion | kfdo | perf2bolt-19 | speed-up | kfdo peak RSS | perf2bolt peak RSS | memory ratio |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, T, M in (("perf.data -> BOLT fdata", K, MK), ("perf.data -> Propeller cc + ld profiles", R, MR)):
    print(f"| {name} | {med(T):.2f} s | {med(P):.2f} s | {med(P)/med(T):.1f}x | {max(M)/1024:.0f} MiB | {max(MP)/1024:.0f} MiB | {max(MP)/max(M):.1f}x |")
print(f"\n{records} BOLT records; fdata from kfdo and perf2bolt-19 (sorted): {same}; Propeller: {hot} hot functions laid out")
PY
