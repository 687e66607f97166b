# Sourced by scripts/test.sh and scripts/example.sh (from the repository root): the
# Debian packages the caller needs (scripts/install-deps.sh), then a Rust toolchain:
# cargo from PATH, else from ~/.cargo/env, else installed with rustup.
# $1: the calling script's name, for its messages; $2: install-deps.sh's argument
# (--example: what the bundled example runs; none: everything the tests use).
kfdo_bootstrap() {
  local who=$1
  bash scripts/install-deps.sh ${2:+"$2"}
  if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
    . "$HOME/.cargo/env"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "$who: installing Rust with rustup"
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    . "$HOME/.cargo/env"
  fi
}
