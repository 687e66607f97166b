#!/usr/bin/env bash
# Benchmark: what `kfdo collect` costs the host it runs on, over a long run.
#
#   bash benches/collect_cost.sh [MINUTES] [WINDOW] [EVERY] [MAX_CPU]
#
# Starts a local object store (scripts/seaweedfs.sh), runs `kfdo collect run` on the
# whole machine for MINUTES (default 30) with windows of WINDOW (default 10s) every
# EVERY (default 1m), uploading to s3://kfdo/bench/, under --max-cpu MAX_CPU (default
# 5), then stops it with SIGTERM the way systemd does and prints, from its status file
# and the store: the collector's CPU share (its own and its perf's CPU time over the
# wall time), its peak memory and perf's, windows recorded / shortened / skipped,
# files spooled / uploaded / dropped and what the store holds. Whatever else runs on
# the machine is what gets sampled: the numbers are those of this machine's load at
# the time. Not a test: it prints.
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES=${1:-30}
WINDOW=${2:-10s}
EVERY=${3:-1m}
MAX_CPU=${4:-5}
WORK=${KFDO_BENCH_DIR:-/tmp/kfdo-bench-collect}
KFDO=${KFDO_BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/kfdo}
[ -n "${KFDO_BIN:-}" ] || cargo build --release -q -p kfdo
PORT=${KFDO_BENCH_PORT:-18633}

bash scripts/seaweedfs.sh stop "$WORK/store" >/dev/null 2>&1 || true
rm -rf "$WORK"
mkdir -p "$WORK"
bash scripts/seaweedfs.sh start "$WORK/store" "$PORT" kfdo
trap 'bash scripts/seaweedfs.sh stop "$WORK/store" >/dev/null 2>&1 || true' EXIT
# shellcheck disable=SC1091
source "$WORK/store/env"

"$KFDO" collect run --spool "$WORK/spool" --host bench-host --host-class bench \
  --upload s3://kfdo/bench/ --window "$WINDOW" --every "$EVERY" --max-cpu "$MAX_CPU" \
  > "$WORK/collect.log" 2>&1 &
pid=$!
sleep $((MINUTES * 60))
kill -TERM "$pid"
wait "$pid" || true

"$KFDO" collect status --spool "$WORK/spool"
status="$WORK/spool/status.json"
python3 - "$status" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
c, w, f = s["cost"], s["windows"], s["files"]
print()
print(f"collect cost: {c['cpu_percent']:.2f} % of one CPU ({c['cpu_seconds']:.1f} s CPU over "
      f"{c['wall_seconds']:.0f} s wall; budget {c['max_cpu_percent']} %)")
print(f"peak memory: collector {c['peak_rss_kib'] / 1024:.1f} MiB, perf {c['perf_peak_rss_kib'] / 1024:.1f} MiB")
print(f"windows: {w['recorded']} recorded ({w['samples']} samples), {w['shortened']} shortened, "
      f"{w['skipped_cpu']} skipped, {w['failed']} failed")
print(f"files: {f['spooled']} spooled, {f['uploaded']} uploaded ({f['uploaded_bytes']} bytes), "
      f"{f['waiting']} waiting, {f['dropped_spool_full']} dropped (spool full), "
      f"{f['dropped_unreadable']} unreadable; {f['below_min_samples']} below --min-samples, "
      f"{f['not_aggregated']} not aggregated")
PY
echo
echo "the store holds (s3://kfdo/bench/):"
curl -sS --fail --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  "$AWS_ENDPOINT_URL/kfdo?list-type=2&max-keys=1000&prefix=bench%2F" \
  | grep -o '<Key>[^<]*</Key><ETag>[^<]*</ETag><Size>[0-9]*' \
  | sed 's/<Key>\([^<]*\)<\/Key><ETag>[^<]*<\/ETag><Size>\([0-9]*\)/\2\t\1/' \
  | awk -F'\t' '{n++; b+=$1; split($2, p, "/"); ids[p[3]]++} END {printf "%d objects, %d bytes, %d build-ids\n", n, b, length(ids)}'
