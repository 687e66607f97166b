#!/usr/bin/env bash
# test-native.sh [CC...]: builds kfdo-workload with each compiler (default: clang-19
# and gcc, those installed) and runs the whole suite on this host, not as PID 1:
# the binary then reads KFDO_RUN from the environment, leaves the system alone and
# exits 0 or 1. Checks the result lines, the final `done`, the failures, and that the
# build is free of warnings. Exits non-zero on the first problem.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

# Small sizes; tcp_stream's is not a multiple of its 16 KiB writes on purpose.
suite="tcp_rr:2000,tcp_stream:4000037,pipe:2000,unix:2000,ctxsw:2000,fork_exit:100,fork_exec:50,file:500,syscall:100000,tun:2000"

if [ $# -gt 0 ]; then
    compilers=("$@")
else
    compilers=()
    for cc in clang-19 gcc; do
        command -v "$cc" >/dev/null 2>&1 && compilers+=("$cc")
    done
    [ ${#compilers[@]} -gt 0 ] || { echo "test-native: no clang-19 or gcc" >&2; exit 1; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfdo-workload-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "test-native: $cc: $*" >&2; exit 1; }

# run VAR=VALUE...: runs the binary with a time limit; sets $out and $rc.
run() {
    rc=0
    out=$(env "$@" timeout 300 "$bin" 2>&1) || rc=$?
}

# check_results LIST OUTPUT: one line per NAME:ARG of LIST, in order, ops=ARG, rate > 0;
# the request/response workloads (tcp_rr, pipe, unix) with their round trips'
# percentiles, p1 <= p50 <= p99, and the mean within a tenth of 1/rate.
check_results() {
    local list=$1 output=$2 i=0 entry line name
    local -a lines
    mapfile -t lines <<<"$output"
    IFS=, read -ra entries <<<"$list"
    for entry in "${entries[@]}"; do
        line=${lines[$i]:-}
        name=${entry%%:*}
        [[ $line =~ ^kfdo-workload:\ $name\ ops=([0-9]+)\ seconds=[0-9]+\.[0-9]{6}\ ops_per_s=([0-9]+\.[0-9])(.*)$ ]] ||
            fail "line $((i + 1)): expected a result for $entry, got '$line'"
        [ "${BASH_REMATCH[1]}" = "${entry#*:}" ] || fail "$entry: ops=${BASH_REMATCH[1]}"
        local rate=${BASH_REMATCH[2]} rest=${BASH_REMATCH[3]}
        awk -v r="$rate" 'BEGIN { exit !(r > 0) }' || fail "$entry: ops_per_s=$rate"
        case $name in
        tcp_rr | pipe | unix)
            [[ $rest =~ ^\ p1_us=([0-9.]+)\ p50_us=([0-9.]+)\ p99_us=([0-9.]+)\ mean_us=([0-9.]+)$ ]] ||
                fail "$entry: no latency percentiles in '$line'"
            awk -v p1="${BASH_REMATCH[1]}" -v p50="${BASH_REMATCH[2]}" -v p99="${BASH_REMATCH[3]}" \
                -v mean="${BASH_REMATCH[4]}" -v r="$rate" \
                'BEGIN { m = 1e6 / r; exit !(p1 > 0 && p1 <= p50 && p50 <= p99 && mean > 0.9 * m && mean < 1.1 * m) }' ||
                fail "$entry: inconsistent latencies in '$line'"
            ;;
        *) [ -z "$rest" ] || fail "$entry: unexpected fields in '$line'" ;;
        esac
        i=$((i + 1))
    done
    [ ${#lines[@]} -eq $((i + 1)) ] || fail "expected $((i + 1)) lines, got ${#lines[@]}"
    [ "${lines[$i]}" = "kfdo-workload: done" ] || fail "last line: '${lines[$i]}'"
}

# expect_failure WHAT VAR=VALUE...: exit 1, one FAILED line mentioning WHAT and nothing run.
expect_failure() {
    local what=$1
    shift
    run "$@"
    [ "$rc" -eq 1 ] || fail "$*: exit status $rc, not 1"
    [[ $out == "kfdo-workload: FAILED "*"$what"* ]] || fail "$*: no FAILED line naming '$what': $out"
    [ "$(wc -l <<<"$out")" -eq 1 ] || fail "$*: more than the FAILED line: $out"
}

for cc in "${compilers[@]}"; do
    bin="$tmp/$cc/kfdo-workload"
    # Warning-free: build.sh prints nothing at all when all is well.
    if ! bash "$here/build.sh" "$tmp/$cc" --cc "$cc" >"$tmp/build.log" 2>&1; then
        cat "$tmp/build.log" >&2
        fail "build failed"
    fi
    [ ! -s "$tmp/build.log" ] || { cat "$tmp/build.log" >&2; fail "the build printed warnings"; }

    echo "test-native: $cc"
    run KFDO_RUN="$suite"
    echo "$out"
    [ "$rc" -eq 0 ] || fail "exit status $rc"
    check_results "$suite" "$out"

    # kfdo.repeat: the list again, whole.
    run KFDO_RUN="syscall:10,pipe:10" KFDO_REPEAT=2
    [ "$rc" -eq 0 ] || fail "KFDO_REPEAT=2: exit status $rc: $out"
    check_results "syscall:10,pipe:10,syscall:10,pipe:10" "$out"

    # Bad lists are refused before anything runs, naming the bad text and the valid names.
    expect_failure "'bogus'" KFDO_RUN="tcp_rr:10,bogus:5"
    expect_failure "valid names: tcp_rr, tcp_stream, pipe, unix, ctxsw, fork_exit, fork_exec, file, syscall" \
        KFDO_RUN="bogus:5"
    expect_failure "'pipe:1x'" KFDO_RUN="pipe:1x"
    expect_failure "'pipe'" KFDO_RUN="pipe"
    expect_failure "'pipe:0'" KFDO_RUN="pipe:0"
    expect_failure "KFDO_RUN: missing" KFDO_RUN=
    expect_failure "KFDO_REPEAT" KFDO_RUN="pipe:1" KFDO_REPEAT=zero

    # argv[0] "kfdo-true": fork_exec's child exits 0 at once, silently.
    rc=0
    out=$(exec -a kfdo-true "$bin" 2>&1) || rc=$?
    [ "$rc" -eq 0 ] && [ -z "$out" ] || fail "as kfdo-true: exit status $rc, output '$out'"

    echo "test-native: $cc: ok"
done
