#!/usr/bin/env bash
# Runs every test: installs what the tests need (Debian packages, Rust), then
# `cargo test` over the whole workspace in release mode (the integration tests
# build real programs and run the reference tools; release keeps them quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if ! command -v cargo >/dev/null 2>&1; then
  [ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: installing Rust with rustup"
  curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
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
