#!/usr/bin/env bash
# Runs every test, as CI does: installs what the tests need (Debian packages, Rust),
# checks formatting and lints, then `cargo test` over the whole workspace in release
# mode (the integration tests build real programs and run the reference tools; release
# keeps them quick). Every test runs: KFDO_REQUIRE_TOOLS=1 makes a test whose tool or
# test kernel is missing fail instead of skipping, and the kernel tests build and boot
# their kernels (tens of minutes on 2 cores; later runs reuse the unchanged builds).
#
#   bash scripts/test.sh [--quick] [ARGS for cargo test...]
#
# --quick is the developer loop: the same run without the long tests (kernel builds and
# boots, the sqlite3 and Spark builds; each marks itself with kfdo_testkit::long_test),
# which it lists at the end. Either way the run ends, also when a test failed, with
# each test binary's time and each long test's (slowest first) and a summary of every
# test that was skipped or left out, and why.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bootstrap.sh

quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi

kfdo_bootstrap test.sh
# Formatting and lints first: cheap, and they fail fast.
for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    echo "test.sh: installing the $component component"
    rustup component add "$component"
  fi
done
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings

export KFDO_REQUIRE_TOOLS=1
if [ "$quick" = 1 ]; then
  export KFDO_QUICK=1
else
  unset KFDO_QUICK
fi
# kfdo-testkit appends each skipped test here (the test, a tab, why): cargo shows a
# passing test's output to no one, so the summary below is where a person sees it.
target=${CARGO_TARGET_DIR:-$PWD/target}
mkdir -p "$target"
export KFDO_SKIP_LOG=$target/kfdo-test-skips.txt
# And each long test's time (kfdo_testkit::time_this_test): they share a test binary with
# short ones, so the binary's time alone does not say which took it.
export KFDO_TEST_TIMES=$target/kfdo-test-times.txt
log=$target/kfdo-test-output.txt
: >"$KFDO_SKIP_LOG"
: >"$KFDO_TEST_TIMES"
: >"$log"

# Each test binary's time, from cargo's "Running X" / "Doc-tests X" line and the
# "finished in" of the "test result:" line that closes it.
print_times() {
  local table
  table=$(awk '
    /^ *Running / {
      bin = $NF; gsub(/[()]/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
      src = $0; sub(/^ *Running /, "", src); sub(/ \(.*$/, "", src)
      label = bin " (" src ")"
    }
    /^ *Doc-tests / { label = "doc-tests " $2 }
    /^test result:/ {
      secs = $NF; sub(/s$/, "", secs)
      passed = $0; sub(/ passed.*/, "", passed); sub(/.* /, "", passed)
      printf "%10.2f s  %5d passed  %s\n", secs, passed, label
    }' "$log" | sort -rn)
  echo
  echo "== time per test binary (slowest first)"
  echo "${table:-  (no test binary finished)}"
  if [ -s "$KFDO_TEST_TIMES" ]; then
    echo
    echo "== time per long test (slowest first)"
    awk -F '\t' '{ printf "%10.1f s  %s\n", $2, $1 }' "$KFDO_TEST_TIMES" | sort -rn
  fi
}

print_skips() {
  local left_out others
  left_out=$(grep -c "left out of the quick run" "$KFDO_SKIP_LOG" || true)
  others=$(grep -vc "left out of the quick run" "$KFDO_SKIP_LOG" || true)
  if [ "$quick" = 1 ]; then
    echo
    echo "== left out by --quick: $left_out tests (bash scripts/test.sh runs them)"
    grep "left out of the quick run" "$KFDO_SKIP_LOG" | sed "s/^/  /; s/\tleft out of the quick run: /: /" || true
  fi
  echo
  if [ "$others" -gt 0 ]; then
    echo "== skipped: $others tests did not run here (from $KFDO_SKIP_LOG)"
    grep -v "left out of the quick run" "$KFDO_SKIP_LOG" | sed 's/^/  /; s/\t/: /'
  else
    echo "== skipped: none"
  fi
}

# Each failed test's own message, without the backtrace frames, last: a log cut to its
# head and tail (a CI page) still shows why a test failed, not only that it did.
print_failures() {
  grep -q '^---- .* stdout ----$' "$log" || return 0
  echo
  echo "== why each failed test failed (backtraces are in $log)"
  awk '
    /^---- .* stdout ----$/ { on = 1; n = 0; print; next }
    on && (/^failures:$/ || /^---- /) { on = 0 }
    on && (/^ +[0-9]+: / || /^ +at / || /^stack backtrace:/ || /^note: Some details/) { next }
    on && n < 40 { print "  " $0; n++ }
    on && n == 40 { print "  [...]"; n++ }
  ' "$log"
}

summary() {
  local status=$?
  print_times
  print_skips
  if [ "$status" -ne 0 ]; then
    print_failures
    echo
    echo "test.sh: FAILED (exit $status); cargo's output is in $log"
  fi
}
trap summary EXIT

# Cargo's own lines (each binary's "test result: ok. N passed; M failed ...") stay in
# the log as they were; a copy goes to $log for the table. --no-fail-fast: a failing test
# binary does not stop the ones after it, so one run reports every failure.
cargo test --release --workspace --no-fail-fast "$@" 2>&1 | tee "$log"
