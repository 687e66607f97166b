#!/usr/bin/env bash
# A local S3-compatible object store (SeaweedFS, built by install-seaweedfs.sh) for the
# fleet loop's tests and example: `kfdo collect` uploads to it, `kfdo merge-raw` and the
# Spark job read `s3://` prefixes from it.
#
#   bash scripts/seaweedfs.sh start DIR [PORT [BUCKET...]]   start it, data and logs in DIR
#   bash scripts/seaweedfs.sh stop DIR                       stop it (its data stays)
#   source DIR/env                                            the S3 variables for clients
#
# PORT (default 8333) is the S3 endpoint's; the store's inner services take PORT+1..+3 and
# their gRPC ports 10000 above each. `start` waits until the endpoint answers, creates the
# buckets (default `kfdo`), and writes DIR/env with the usual variables: AWS_ENDPOINT_URL,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's/^SEAWEEDFS_VERSION=//p' "$here/install-seaweedfs.sh")"
weed="${KFDO_SEAWEEDFS_DIR:-$HOME/.cache/kfdo/seaweedfs}/weed-$version"

usage() { sed -n '6,8p' "$0" | sed 's/^# *//' >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd="$1"
dir="$2"

case "$cmd" in
  start)
    port="${3:-8333}"
    shift $(( $# < 3 ? $# : 3 ))
    buckets=("$@")
    [ ${#buckets[@]} -gt 0 ] || buckets=(kfdo)
    [ -x "$weed" ] || bash "$here/install-seaweedfs.sh"
    mkdir -p "$dir/data"
    dir="$(cd "$dir" && pwd)"
    if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
      echo "seaweedfs: already running in $dir (pid $(cat "$dir/pid")); stop it first" >&2
      exit 1
    fi
    # A port already taken (another store) would answer the readiness check below in
    # this store's stead, while this one exits: refuse instead.
    for p in "$port" $((port + 1)) $((port + 2)) $((port + 3)) \
             $((port + 10000)) $((port + 10001)) $((port + 10002)) $((port + 10003)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
        echo "seaweedfs: port $p on 127.0.0.1 is in use (another store?); choose another PORT (a store takes PORT..PORT+3 and each +10000)" >&2
        exit 1
      fi
    done
    key="kfdo"
    secret="kfdo-local-secret"
    cat > "$dir/s3.json" <<EOF
{"identities": [{"name": "kfdo", "credentials": [{"accessKey": "$key", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
    # One process runs the master, a volume server, the filer and the S3 gateway; small
    # volumes, so that an empty store takes little disk. The S3 gateway's Iceberg and
    # Lance catalog servers are off: unused here, and on fixed ports that a second store
    # would find taken. No telemetry from a test store.
    "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$dir/data" \
      -master.port=$((port + 1)) -volume.port=$((port + 2)) -filer.port=$((port + 3)) \
      -master.volumeSizeLimitMB=64 -volume.max=32 -master.telemetry=false \
      -s3 -s3.port="$port" -s3.config="$dir/s3.json" -s3.port.iceberg=0 -s3.port.lance=0 \
      < /dev/null > "$dir/weed.log" 2>&1 &
    echo $! > "$dir/pid"
    cat > "$dir/env" <<EOF
export AWS_ENDPOINT_URL=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=$key
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=us-east-1
EOF
    # Ready when a bucket can be made: the S3 gateway answers only once the filer does.
    for b in "${buckets[@]}"; do
      ok=""
      for _ in $(seq 1 120); do
        code="$(curl -s -o /dev/null -w '%{http_code}' -X PUT \
                  --aws-sigv4 "aws:amz:us-east-1:s3" --user "$key:$secret" \
                  "http://127.0.0.1:$port/$b" || true)"
        if [ "$code" = 200 ] || [ "$code" = 409 ]; then ok=1; break; fi
        if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
          echo "seaweedfs: weed exited; its log, $dir/weed.log, ends:" >&2
          tail -n 20 "$dir/weed.log" >&2
          exit 1
        fi
        sleep 0.5
      done
      if [ -z "$ok" ]; then
        echo "seaweedfs: the S3 endpoint on port $port did not answer within 60 s (last HTTP status $code); see $dir/weed.log" >&2
        # Not left running half-started.
        kill "$(cat "$dir/pid")" 2>/dev/null || true
        rm -f "$dir/pid"
        exit 1
      fi
    done
    echo "seaweedfs: S3 at http://127.0.0.1:$port (buckets: ${buckets[*]}); source $dir/env"
    ;;
  stop)
    if [ -f "$dir/pid" ]; then
      pid="$(cat "$dir/pid")"
      # A stale pid file may name a pid reused by another program: only a weed is stopped.
      if ! tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "weed.* server"; then
        rm -f "$dir/pid"
        echo "seaweedfs: not running in $dir (stale pid file removed)"
        exit 0
      fi
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/pid"
      echo "seaweedfs: stopped"
    else
      echo "seaweedfs: not running in $dir"
    fi
    ;;
  *) usage ;;
esac
