#!/usr/bin/env bash
# How fast a profile from emulated LBR converges as the sampling period grows: real programs
# recorded with `kfdo record --method emulated -c P` (32-entry stacks) for P in 1, 31, 101,
# 1009, 10007 (the default) and 100003, each converted with `kfdo profile` to an LLVM sample
# profile (text), and compared with `llvm-profdata-19 overlap --sample` against the period-1
# profile. Not a timed test.
#
# Programs: testdata/programs/lz.c (default input), and sqlite3's speedtest1 (Debian bookworm
# source package, the amalgamation benches/record_overhead.sh builds) run as
# `speedtest1 --size SIZE --memdb`. Both are built with clang-19 -O2 -g
# -fdebug-info-for-profiling -funique-internal-linkage-names, as an AutoFDO build would be.
#
# The reference. At period 1 every taken branch ends a sample, so every branch and every
# fall-through range of the run is counted exactly (32 times, once per stack it appears in):
# the period-1 profile is the exact expectation of what sampling at any period estimates,
# not merely a denser sample. Its cost is one 32-entry sample per taken branch, in
# perf.data and in the recorder's memory (it holds the capture stream while it writes the
# perf.data; see the "record MiB" column). That is why speedtest1 runs at --size 1 by
# default: larger sizes need tens of GB of perf.data and memory for the period-1 run (the
# sizes and times are in docs/performance.md). Each perf.data is deleted as soon as
# it is converted; the work directory needs room for the largest one.
#
# Columns (llvm-profdata-19 overlap --sample, base = the period-1 profile, test = period P):
#   samples         LBR samples kfdo record wrote at that period.
#   record s, MiB   wall seconds and peak RSS of that kfdo record (QEMU included).
#   similarity      "Whole program profile similarity": the sum over functions of
#                   (function weight, the mean of its share of all samples in both profiles)
#                   x (1 - |its share in base - its share in test|)
#                   x (1 - half the L1 distance between its line / block counts, each
#                      normalised to the function's total, inlinees recursively).
#                   Scale-free, so it compares profiles of different periods directly; 100 %
#                   means identical shapes. This is the number to read.
#   functions       "Function overlap": functions in both profiles / functions in either.
#                   Cold functions drop out as the period grows.
#   hot functions   "Hot-function overlap": the same over each profile's hot functions (hot
#                   by each profile's own count threshold from its profile summary).
#   hot blocks      "Hot-block overlap": the same over hot lines / blocks.
#   ref missing     "percentage of samples unique in base profile": the share of the
#                   reference's samples on lines / functions the period-P profile lacks.
# Noise: a recording is deterministic for a given binary, input and environment, but the
# environment (its size changes how many branches start-up takes) shifts where the samples
# fall, so rows move by some tenths of a point between invocations, most at large periods.
# The three hot-set numbers also jitter at the threshold: lz has 49 hot blocks, so one block
# crossing it moves "hot blocks" by 2 points in either direction.
# Left out: "Whole program sample overlap" (sum of min / sum of max of the raw counts),
# which is not scale-free: a period-P profile has about 1/P of the reference's counts, so it
# says "P" rather than anything about the shape.
#
#   benches/record_convergence.sh [SIZE]        (default: speedtest1 --size 1)
# KFDO_BIN=path uses that kfdo binary instead of building target/release/kfdo;
# KFDO_PERIODS="1 ..." overrides the periods (the first is the reference);
# KFDO_BENCH_WORK=dir puts the perf.data files there (default: a temporary directory).
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1}"
read -r -a periods <<<"${KFDO_PERIODS:-1 31 101 1009 10007 100003}"
cache="${KFDO_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfdo/bench}"
cflags=(-O2 -g -fdebug-info-for-profiling -funique-internal-linkage-names)
for tool in clang-19 llvm-profdata-19 qemu-x86_64 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "record_convergence: $tool is not installed (bash scripts/install-deps.sh)" >&2; exit 1; }
done

# speedtest1: the sqlite3.c amalgamation as benches/record_overhead.sh makes it, built
# with the AutoFDO flags into a directory of its own.
src="$(bash scripts/fetch-debian-source.sh sqlite3 | tail -n1)"
amalg="$cache/sqlite3-speedtest1"
bld="$cache/sqlite3-speedtest1-fdo"
mkdir -p "$amalg" "$bld"
if [ ! -x "$bld/speedtest1" ]; then
  if [ ! -f "$amalg/sqlite3.c" ]; then
    echo "record_convergence: generating the sqlite3.c amalgamation in $amalg" >&2
    (cd "$amalg" && CC=clang-19 "$src/configure" --disable-tcl >/dev/null && make -s sqlite3.c >/dev/null)
  fi
  echo "record_convergence: building speedtest1 in $bld (about 2 minutes)" >&2
  clang-19 "${cflags[@]}" -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_THREADSAFE=0 -I"$amalg" \
    -o "$bld/speedtest1.tmp" "$src/test/speedtest1.c" "$amalg/sqlite3.c" -lm
  mv "$bld/speedtest1.tmp" "$bld/speedtest1"
fi
mkdir -p "$cache/lz-fdo"
clang-19 "${cflags[@]}" -o "$cache/lz-fdo/lz" testdata/programs/lz.c

if [ -z "${KFDO_BIN:-}" ]; then cargo build --release -q -p kfdo; fi
kfdo="${KFDO_BIN:-$PWD/target/release/kfdo}"
if [ -n "${KFDO_BENCH_WORK:-}" ]; then
  mkdir -p "$KFDO_BENCH_WORK"
  work="$(mktemp -d "$KFDO_BENCH_WORK/convergence.XXXXXX")"
else
  work="$(mktemp -d)"
fi
trap 'rm -rf "$work"' EXIT

pct() { # the percentage on the first line of overlap output $1 that starts with $2
  grep -m1 -F "$2" <<<"$1" | sed -n 's/.*: *\([0-9.]*\)%.*/\1/p'
}

# One program: record at every period, convert, compare with the first (period-1) profile.
converge() {
  local name="$1"; shift
  local exe="$1"; shift
  local ref="" p json samples secs kib mib prof ov
  printf '\n%s (%s)\n\n' "$name" "${*:-its default input}"
  printf '| period | samples | record s | record MiB | similarity | functions | hot functions | hot blocks | ref missing |\n'
  printf '|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n'
  for p in "${periods[@]}"; do
    # With --json the program's own output goes to stderr and stdout is the JSON; the
    # top-level "samples" line is all this table needs.
    json=$(/usr/bin/time -o "$work/time" -f "%e %M" \
      "$kfdo" record --json -q --method emulated -c "$p" -o "$work/p.data" -- "$exe" "$@" 2>"$work/record.err") || {
      echo "record_convergence: kfdo record -c $p failed:" >&2; cat "$work/record.err" >&2; exit 1; }
    read -r secs kib <"$work/time"
    mib=$((kib / 1024))
    samples=$(sed -n 's/^  "samples": \([0-9]*\),*$/\1/p' <<<"$json")
    prof="$work/$name.p$p.prof"
    "$kfdo" profile -q --binary "$exe" --perf-data "$work/p.data" -o "$prof" --format text
    rm -f "$work/p.data"
    if [ -z "$ref" ]; then
      ref="$prof"
      printf '| %s (reference) | %s | %.1f | %s | 100 %% | 100 %% | 100 %% | 100 %% | 0 %% |\n' "$p" "$samples" "$secs" "$mib"
      continue
    fi
    ov=$(llvm-profdata-19 overlap --sample "$ref" "$prof")
    printf '| %s | %s | %.1f | %s | %s %% | %s %% | %s %% | %s %% | %s %% |\n' "$p" "$samples" "$secs" "$mib" \
      "$(pct "$ov" "Whole program profile similarity")" "$(pct "$ov" "Function overlap")" \
      "$(pct "$ov" "Hot-function overlap")" "$(pct "$ov" "Hot-block overlap")" \
      "$(pct "$ov" "percentage of samples unique in base profile")"
  done
}

echo "Emulated LBR (kfdo record --method emulated, 32-entry stacks): profile convergence against period 1"
converge lz "$cache/lz-fdo/lz"
converge speedtest1 "$bld/speedtest1" --size "$size" --memdb
