#!/usr/bin/env bash
# The bundled example (filled in as the pipeline lands).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cargo build --release -p kfdo
