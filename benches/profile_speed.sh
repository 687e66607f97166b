#!/usr/bin/env bash
# Benchmark: `kfdo profile` against llvm-profgen-19 on >= 1.5 million LBR samples of a
# real program, measured side by side in one run (interleaved rounds, medians).
#
#   bash benches/profile_speed.sh [ROUNDS] [PERIOD] [SIZE] [MIN_SAMPLES]
#
# Input: SQLite's speedtest1 (Debian bookworm's sqlite3 source, as recipes/sqlite3 builds
# it: clang-19 -O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names) run as
# `speedtest1 --size SIZE --memdb` (default 25), recorded with `kfdo record --method emulated` at a
# realistic sampling period (default 10007 taken branches, kfdo's default; 32-entry
# stacks). A recording under emulation is short (tens of thousands of samples), so the
# benchmark input is that recording repeated until it holds MIN_SAMPLES (default 1.5 M):
#   - text: `perf script -F ip,brstack --show-mmap-events` of the recording, its mapping
#     lines once, then its sample lines N times;
#   - perf.data: the recording with its sample records N times (benches/repeat_perf_data.py:
#     side-band records once, each copy's timestamps shifted past the previous copy so the
#     stream stays in time order). `perf script` of it prints exactly the text input.
# Repeating a recording is what a long run of a steady workload looks like to a converter
# (the same hot paths, so the same LBR stacks, again and again), as real data at a real
# period does: llvm-profgen aggregates identical samples first, and so uses little memory.
#
# Compared (wall seconds and peak RSS of each command), each kfdo side with 1 and with 2
# threads (`kfdo profile --threads N`; RAYON_NUM_THREADS works too):
#   text:      kfdo profile --perf-script   vs  llvm-profgen-19 --perfscript (same text)
#   perf.data: kfdo profile --perf-data     vs  perf script + llvm-profgen-19
# Then kfdo's peak RSS on the 1x input and on a 4x one (the sample lines, or records,
# repeated 4 times more): memory must not grow with samples. The profiles of kfdo and
# llvm-profgen-19 are compared as `llvm-profdata-19 merge --sample --text`.
# Every command starts with its input in the page cache (read once just before), so no
# side pays for the disk because the previous command evicted it. Not a test: it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
PERIOD=${2:-10007}
SIZE=${3:-25}
MIN_SAMPLES=${4:-1500000}
WORK=${KFDO_BENCH_DIR:-/tmp/kfdo-bench-profile-sqlite}
KFDO=${KFDO_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/kfdo}
mkdir -p "$WORK"
[ -n "${KFDO_BIN:-}" ] || cargo build --release -q -p kfdo

# speedtest1, built as recipes/sqlite3/recipe.toml builds it.
if [ ! -x "$WORK/speedtest1" ]; then
  SRC=$(bash scripts/fetch-debian-source.sh sqlite3 | tail -n1)
  if [ ! -s "$WORK/prep/sqlite3.c" ]; then
    echo "generating sqlite3.c..."
    mkdir -p "$WORK/prep"
    (cd "$WORK/prep" && "$SRC/configure" --disable-tcl --disable-readline >/dev/null && make -s sqlite3.c)
  fi
  echo "building speedtest1..."
  clang-19 -O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names \
    -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$WORK/prep" \
    -o "$WORK/speedtest1.new" "$SRC/test/speedtest1.c" "$WORK/prep/sqlite3.c" -lm
  mv "$WORK/speedtest1.new" "$WORK/speedtest1"
fi
BIN="$WORK/speedtest1"

if [ ! -s "$WORK/rec.data" ] || [ "$WORK/rec.data" -ot "$BIN" ] \
  || [ "$(cat "$WORK/rec.params" 2>/dev/null)" != "$PERIOD $SIZE" ]; then
  echo "recording speedtest1 --size $SIZE under emulated LBR (period $PERIOD)..."
  "$KFDO" -q record --method emulated --period "$PERIOD" -o "$WORK/rec.data" -- \
    "$BIN" --size "$SIZE" --memdb >/dev/null
  echo "$PERIOD $SIZE" > "$WORK/rec.params"
  rm -f "$WORK/lbr.script"
fi
if [ ! -s "$WORK/lbr.script" ]; then
  perf script -i "$WORK/rec.data" -F ip,brstack --show-mmap-events > "$WORK/rec.script" 2>/dev/null
  grep PERF_RECORD "$WORK/rec.script" > "$WORK/rec.maps" || true
  grep -v PERF_RECORD "$WORK/rec.script" > "$WORK/rec.samples"
  ONE=$(wc -l < "$WORK/rec.samples")
  N=$(( (MIN_SAMPLES + ONE - 1) / ONE ))
  echo "recording: $ONE samples; repeating it $N times (and $((4 * N)) for the 4x input)..."
  for k in 1 4; do
    out="$WORK/lbr.script"; [ "$k" = 1 ] || out="$WORK/lbr4.script"
    { cat "$WORK/rec.maps"; for _ in $(seq 1 $((k * N))); do cat "$WORK/rec.samples"; done; } > "$out.tmp"
    data="${out%.script}.data"
    python3 benches/repeat_perf_data.py "$WORK/rec.data" $((k * N)) "$data" >/dev/null
    mv "$out.tmp" "$out"
  done
  rm -f "$WORK/rec.samples"
fi
SAMPLES=$(grep -vc PERF_RECORD "$WORK/lbr.script")
echo "input: $SAMPLES LBR samples; perf.data $(du -h "$WORK/lbr.data" | cut -f1), perf script text $(du -h "$WORK/lbr.script" | cut -f1)"

. benches/measure.sh
warm() { cat "$1" > /dev/null; }
kfdo_profile() { # THREADS INPUT-FLAG FILE OUT
  RAYON_NUM_THREADS="$1" measure "$KFDO" -q profile --binary "$BIN" "$2" "$3" -o "$4"
}

# T1/T2: kfdo text, 1/2 threads; TR: llvm-profgen on the text;
# D1/D2: kfdo perf.data, 1/2 threads; DR: perf script + llvm-profgen.
declare -a T1 T2 TR D1 D2 DR MT1 MT2 MTR MD1 MD2 MDR MDS
for r in $(seq 1 "$ROUNDS"); do
  warm "$WORK/lbr.script"
  read -r t m < <(kfdo_profile 1 --perf-script "$WORK/lbr.script" "$WORK/kfdo-text.prof"); T1+=("$t"); MT1+=("$m")
  warm "$WORK/lbr.script"
  read -r t m < <(measure llvm-profgen-19 --binary "$BIN" --perfscript "$WORK/lbr.script" -o "$WORK/ref-text.prof"); TR+=("$t"); MTR+=("$m")
  warm "$WORK/lbr.script"
  read -r t m < <(kfdo_profile 2 --perf-script "$WORK/lbr.script" "$WORK/kfdo-text.prof"); T2+=("$t"); MT2+=("$m")
  warm "$WORK/lbr.data"
  read -r t m < <(kfdo_profile 1 --perf-data "$WORK/lbr.data" "$WORK/kfdo.prof"); D1+=("$t"); MD1+=("$m")
  warm "$WORK/lbr.data"
  read -r t1 m1 < <(measure sh -c "perf script -i '$WORK/lbr.data' -F ip,brstack --show-mmap-events > '$WORK/round.script' 2>/dev/null")
  read -r t2 m2 < <(measure llvm-profgen-19 --binary "$BIN" --perfscript "$WORK/round.script" -o "$WORK/ref.prof")
  DR+=("$(python3 -c "print($t1 + $t2)")"); MDR+=("$m2"); MDS+=("$m1")
  rm -f "$WORK/round.script"
  warm "$WORK/lbr.data"
  read -r t m < <(kfdo_profile 2 --perf-data "$WORK/lbr.data" "$WORK/kfdo.prof"); D2+=("$t"); MD2+=("$m")
  echo "round $r: text: kfdo ${T1[-1]}s (1 thread) ${T2[-1]}s (2), llvm-profgen ${TR[-1]}s;" \
    "perf.data: kfdo ${D1[-1]}s (1) ${D2[-1]}s (2), perf script + llvm-profgen ${DR[-1]}s"
done

# Memory against samples: the same with the 4x input (once each).
declare -a M4
for f in script data; do
  for th in 1 2; do
    warm "$WORK/lbr4.$f"
    read -r _ m < <(kfdo_profile "$th" "--perf-$f" "$WORK/lbr4.$f" "$WORK/kfdo4.prof"); M4+=("$m")
  done
done

SAME=""
for pair in "kfdo-text.prof ref-text.prof" "kfdo.prof ref.prof"; do
  set -- $pair
  llvm-profdata-19 merge --sample --text -o "$WORK/$1.txt" "$WORK/$1"
  llvm-profdata-19 merge --sample --text -o "$WORK/$2.txt" "$WORK/$2"
  if cmp -s "$WORK/$1.txt" "$WORK/$2.txt"; then SAME+=" identical"; else SAME+=" DIFFERENT"; fi
done

python3 - "$SAMPLES" "$SAME" "${T1[*]}" "${T2[*]}" "${TR[*]}" "${D1[*]}" "${D2[*]}" "${DR[*]}" \
  "${MT1[*]}" "${MT2[*]}" "${MTR[*]}" "${MD1[*]}" "${MD2[*]}" "${MDR[*]}" "${MDS[*]}" "${M4[*]}" <<'PY'
import statistics, sys
samples, same = sys.argv[1], sys.argv[2].split()
T1, T2, TR, D1, D2, DR, MT1, MT2, MTR, MD1, MD2, MDR, MDS, M4 = (
    [float(x) for x in s.split()] for s in sys.argv[3:17])
med = statistics.median
mib = lambda kib: kib / 1024
print(f"\n{int(samples):,} LBR samples, {len(T1)} interleaved rounds, medians "
      "(speed-up: reference / kfdo, per round; peak RSS: max over rounds)")
print("| conversion | threads | kfdo | reference | speed-up median | speed-up min | kfdo peak RSS | reference peak RSS | memory kfdo/ref |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
def row(name, th, K, R, MK, MR):
    sp = [r / k for k, r in zip(K, R)]
    print(f"| {name} | {th} | {med(K):.2f} s | {med(R):.2f} s | {med(sp):.1f}x | {min(sp):.1f}x "
          f"| {mib(max(MK)):.0f} MiB | {mib(max(MR)):.0f} MiB | {max(MK) / max(MR):.2f} |")
text = "perf script text: `kfdo profile --perf-script` vs `llvm-profgen-19`"
data = "perf.data: `kfdo profile --perf-data` vs `perf script` + `llvm-profgen-19`"
row(text, 1, T1, TR, MT1, MTR)
row(text, 2, T2, TR, MT2, MTR)
row(data, 1, D1, DR, MD1, MDR)
row(data, 2, D2, DR, MD2, MDR)
print(f"\n(perf.data reference: the RSS is llvm-profgen-19's; `perf script` itself peaked at {mib(max(MDS)):.0f} MiB)")
print("\nkfdo peak RSS against samples (1x: max over rounds; 4x: the input repeated 4 times, one run):")
print("| input | threads | 1x | 4x | 4x/1x | 4x vs llvm-profgen-19 (1x) |")
print("| --- | --- | --- | --- | --- | --- |")
for (name, th, M1, m4, MR) in [("text", 1, MT1, M4[0], MTR), ("text", 2, MT2, M4[1], MTR),
                               ("perf.data", 1, MD1, M4[2], MDR), ("perf.data", 2, MD2, M4[3], MDR)]:
    print(f"| {name} | {th} | {mib(max(M1)):.0f} MiB | {mib(m4):.0f} MiB | {m4 / max(M1):.2f} | {m4 / max(MR):.2f} |")
print(f"\nprofiles from kfdo and llvm-profgen-19: text {same[0]}, perf.data {same[1]}")
PY
