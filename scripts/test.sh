#!/usr/bin/env bash
# Runs every test: installs what the tests need (Debian packages, Rust), then
# `cargo test` over the whole workspace in release mode (the integration tests
# build real programs and run the reference tools; release keeps them quick).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bootstrap.sh
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
cargo test --release --workspace "$@"
