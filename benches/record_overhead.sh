#!/usr/bin/env bash
# Overhead of emulated LBR: sqlite3's speedtest1 (Debian bookworm source package, built
# with clang-19 -O2) natively, under plain qemu-x86_64, and under
#   kfdo record --method emulated   (vLBR plugin, period 10007, 32-entry stacks)
# and, with --counters, the emulated counters too. Runs are interleaved (ROUNDS rounds of
# each), and ratios are printed from medians of this one run, and as the median of each
# round's own ratio. Not a timed test.
#
#   benches/record_overhead.sh [ROUNDS] [SIZE]        (defaults: 5 rounds, --size 20)
# KFDO_BIN=path uses that kfdo binary instead of building target/release/kfdo.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
size="${2:-20}"
cache="${KFDO_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfdo/bench}"
src="$(bash scripts/fetch-debian-source.sh sqlite3 | tail -n1)"
bld="$cache/sqlite3-speedtest1"
mkdir -p "$bld"
if [ ! -x "$bld/speedtest1" ]; then
  echo "record_overhead: building sqlite3.c amalgamation and speedtest1 in $bld" >&2
  if [ ! -f "$bld/sqlite3.c" ]; then
    (cd "$bld" && CC=clang-19 "$src/configure" --disable-tcl >/dev/null && make -s sqlite3.c >/dev/null)
  fi
  clang-19 -O2 -g -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$bld" \
    -o "$bld/speedtest1.tmp" "$src/test/speedtest1.c" "$bld/sqlite3.c" -lm
  mv "$bld/speedtest1.tmp" "$bld/speedtest1"
fi
if [ -z "${KFDO_BIN:-}" ]; then cargo build --release -q -p kfdo; fi
kfdo="${KFDO_BIN:-$PWD/target/release/kfdo}"
exe="$bld/speedtest1"
args=(--size "$size" --memdb)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

t() { # CPU seconds (user + sys, children included) of a command, output discarded.
  # CPU time rather than wall time: the ratio stays meaningful on a shared machine.
  local f; f=$(mktemp)
  /usr/bin/time -o "$f" -f "%U %S" "$@" >/dev/null 2>&1 || true
  awk '{print $1 + $2}' "$f"; rm -f "$f"
}
declare -A times
for ((r = 1; r <= rounds; r++)); do
  times[native]+="$(t "$exe" "${args[@]}") "
  times[qemu]+="$(t qemu-x86_64 "$exe" "${args[@]}") "
  times[vlbr]+="$(t "$kfdo" record -q --method emulated -c 10007 -o "$work/p.data" -- "$exe" "${args[@]}") "
  times[vlbr_counters]+="$(t "$kfdo" record -q --method emulated -c 10007 -o "$work/p.data" --counters-out "$work/c.json" -- "$exe" "${args[@]}") "
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
declare -A med
for k in native qemu vlbr vlbr_counters; do med[$k]=$(echo "${times[$k]}" | median); done
samples=$("$kfdo" record --json -q --method emulated -c 10007 -o "$work/p.data" -- "$exe" "${args[@]}" 2>/dev/null | sed -n 's/.*"samples": \([0-9]*\).*/\1/p')
printf 'speedtest1 --size %s --memdb, %s interleaved rounds, medians of CPU seconds (user + sys):\n' "$size" "$rounds"
printf '  native            %8.3f\n' "${med[native]}"
printf '  qemu-x86_64       %8.3f\n' "${med[qemu]}"
printf '  vLBR              %8.3f   (%s samples at period 10007)\n' "${med[vlbr]}" "$samples"
printf '  vLBR + counters   %8.3f\n' "${med[vlbr_counters]}"
printf 'ratios: vLBR / qemu = %.2fx   vLBR+counters / qemu = %.2fx   vLBR / native = %.2fx   qemu / native = %.2fx\n' \
  "$(echo "${med[vlbr]} / ${med[qemu]}" | bc -l)" "$(echo "${med[vlbr_counters]} / ${med[qemu]}" | bc -l)" \
  "$(echo "${med[vlbr]} / ${med[native]}" | bc -l)" "$(echo "${med[qemu]} / ${med[native]}" | bc -l)"
# The machine's speed drifts between rounds; each round's own ratio cancels the drift.
paired() { paste -d' ' <(echo "${times[$1]}" | tr ' ' '\n' | grep .) <(echo "${times[$2]}" | tr ' ' '\n' | grep .) |
  awk '{print $1 / $2}' | median; }
printf 'medians of the per-round ratios: vLBR / qemu = %.2fx   vLBR+counters / qemu = %.2fx\n' \
  "$(paired vlbr qemu)" "$(paired vlbr_counters qemu)"
