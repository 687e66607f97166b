#!/usr/bin/env bash
# Creates the Python environment the fleet Spark job (fleet/merge_raw.py) and its test
# run in: a venv at ~/.cache/kfdo/pyspark-venv holding pinned pyspark[sql] (pyspark +
# pyarrow + pandas). Idempotent: a second run with the pins already installed does nothing
# and says so. Spark 3.5 supports Java 17, which install-deps.sh's Debian 12 has.
# Override the location with KFDO_PYSPARK_VENV, the interpreter with PYTHON.
set -euo pipefail

PYSPARK_VERSION=3.5.3
PYARROW_VERSION=17.0.0
VENV="${KFDO_PYSPARK_VENV:-$HOME/.cache/kfdo/pyspark-venv}"
PYTHON="${PYTHON:-python3}"

if ! java -version >/dev/null 2>&1; then
  echo "install-pyspark: java not found; Spark needs a JRE (Debian: openjdk-17-jre-headless)" >&2
  exit 1
fi

want="pyspark==$PYSPARK_VERSION pyarrow==$PYARROW_VERSION"
stamp="$VENV/.kfdo-pins"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] \
   && "$VENV/bin/python" -c 'import pyspark, pyarrow' 2>/dev/null; then
  echo "install-pyspark: $VENV already has $want"
  exit 0
fi

echo "install-pyspark: creating $VENV with $want"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# pyspark[sql] pulls pandas and pyarrow; pin pyarrow so the Parquet writer is the same
# everywhere (the merged file's content is checked against kfdo merge-raw).
"$VENV/bin/python" -m pip install -q "pyspark[sql]==$PYSPARK_VERSION" "pyarrow==$PYARROW_VERSION"
echo "$want" > "$stamp"
echo "install-pyspark: done ($("$VENV/bin/python" -c 'import pyspark, pyarrow; print("pyspark", pyspark.__version__, "pyarrow", pyarrow.__version__)'))"
