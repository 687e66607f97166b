#!/usr/bin/env bash
# Creates the Python environment the fleet Spark job (fleet/merge_raw.py) and its test
# run in: a venv at ~/.cache/kfdo/pyspark-venv holding pinned pyspark[sql] (pyspark +
# pyarrow + pandas), plus Hadoop's S3A connector (hadoop-aws and the AWS SDK bundle it was
# built against) in pyspark's own jars/ folder, so that Spark reads s3:// / s3a:// inputs
# with no --packages and no network at run time. Idempotent: a second run with the pins
# already installed does nothing and says so; a venv made by an older version of this
# script (another stamp) gets only what it lacks. Spark 3.5 supports Java 17, which
# install-deps.sh's Debian 12 has.
# Override the location with KFDO_PYSPARK_VENV, the interpreter with PYTHON, the Maven
# repository (a mirror of Maven Central) with KFDO_MAVEN_REPO.
set -euo pipefail

PYSPARK_VERSION=3.5.3
PYARROW_VERSION=17.0.0
# hadoop-aws must be the exact version of the Hadoop that pyspark bundles (its
# hadoop-client-*-3.3.4.jar): S3A uses Hadoop's internal classes. The SDK bundle is the
# one hadoop-aws 3.3.4 declares in its pom. SHA-1s as Maven Central publishes them.
HADOOP_AWS_VERSION=3.3.4
HADOOP_AWS_SHA1=a65839fbf1869f81a1632e09f415e586922e4f80
AWS_SDK_BUNDLE_VERSION=1.12.262
AWS_SDK_BUNDLE_SHA1=02deec3a0ad83d13d032b1812421b23d7a961eea
MAVEN="${KFDO_MAVEN_REPO:-https://repo1.maven.org/maven2}"
VENV="${KFDO_PYSPARK_VENV:-$HOME/.cache/kfdo/pyspark-venv}"
PYTHON="${PYTHON:-python3}"

if ! java -version >/dev/null 2>&1; then
  echo "install-pyspark: java not found; Spark needs a JRE (Debian: openjdk-17-jre-headless)" >&2
  exit 1
fi

py_want="pyspark==$PYSPARK_VERSION pyarrow==$PYARROW_VERSION"
jars_want="hadoop-aws==$HADOOP_AWS_VERSION aws-java-sdk-bundle==$AWS_SDK_BUNDLE_VERSION"
want="$py_want $jars_want"
stamp="$VENV/.kfdo-pins"
# (group path, artifact, version, SHA-1) of each jar.
jars=(
  "org/apache/hadoop hadoop-aws $HADOOP_AWS_VERSION $HADOOP_AWS_SHA1"
  "com/amazonaws aws-java-sdk-bundle $AWS_SDK_BUNDLE_VERSION $AWS_SDK_BUNDLE_SHA1"
)

jars_dir() {
  "$VENV/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))'
}
jars_present() {
  local dir j group artifact version sha
  dir="$(jars_dir 2>/dev/null)" || return 1
  for j in "${jars[@]}"; do
    read -r group artifact version sha <<<"$j"
    [ -s "$dir/$artifact-$version.jar" ] || return 1
  done
}

if [ -x "$VENV/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] \
   && "$VENV/bin/python" -c 'import pyspark, pyarrow' 2>/dev/null && jars_present; then
  echo "install-pyspark: $VENV already has $want"
  exit 0
fi

# The Python packages: kept when the venv already has exactly the pinned versions (a venv
# whose stamp predates the jars needs only the jars, and no pip run).
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "
import sys, pyspark, pyarrow
sys.exit(not (pyspark.__version__ == '$PYSPARK_VERSION' and pyarrow.__version__ == '$PYARROW_VERSION'))
" 2>/dev/null; then
  echo "install-pyspark: $VENV already has $py_want"
else
  echo "install-pyspark: creating $VENV with $py_want"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # pyspark[sql] pulls pandas and pyarrow; pin pyarrow so the Parquet writer is the same
  # everywhere (the merged file's content is checked against kfdo merge-raw).
  "$VENV/bin/python" -m pip install -q "pyspark[sql]==$PYSPARK_VERSION" "pyarrow==$PYARROW_VERSION"
fi

# The S3A jars, into pyspark/jars: Spark puts every *.jar there on the classpath of the
# driver and of local executors. A download goes to a name not ending in .jar (never on
# the classpath half-written), is checked against the pinned SHA-1 and renamed.
dir="$(jars_dir)"
part=""
trap 'if [ -n "$part" ]; then rm -f "$part"; fi' EXIT
sha1_of() { sha1sum "$1" | cut -d' ' -f1; }
# A progress bar for a person watching (the SDK bundle is large), silence in logs.
progress=(-sS)
if [ -t 2 ]; then progress=(--progress-bar); fi
for j in "${jars[@]}"; do
  read -r group artifact version sha <<<"$j"
  name="$artifact-$version.jar"
  url="$MAVEN/$group/$artifact/$version/$name"
  # Other versions of the same artifact (an older pin) would be on the classpath too.
  for old in "$dir/$artifact"-[0-9]*.jar; do
    if [ -e "$old" ] && [ "$old" != "$dir/$name" ]; then
      echo "install-pyspark: removing $(basename "$old") (pinned: $name)"
      rm -f "$old"
    fi
  done
  if [ -s "$dir/$name" ] && [ "$(sha1_of "$dir/$name")" = "$sha" ]; then
    echo "install-pyspark: $name already in $dir"
    continue
  fi
  # Maven Central's own checksum file must agree with the pin: a mismatch means a wrong
  # pin or a repository (mirror) serving another file, both worth stopping for.
  if ! served="$(curl -fsSL --retry 3 "$url.sha1")"; then
    echo "install-pyspark: cannot download $url.sha1 (curl says why above; offline? a proxy? KFDO_MAVEN_REPO names a mirror); the S3A connector needs $name" >&2
    exit 1
  fi
  served="$(printf '%s' "$served" | awk 'NR == 1 { print $1 }')"
  if [ "$served" != "$sha" ]; then
    echo "install-pyspark: $url.sha1 says $served, but this script pins $sha for $name; not installing it" >&2
    exit 1
  fi
  echo "install-pyspark: downloading $url"
  part="$dir/.$name.part.$$"
  if ! curl -fL "${progress[@]}" --retry 3 -o "$part" "$url"; then
    echo "install-pyspark: cannot download $url (curl says why above; offline? a proxy? KFDO_MAVEN_REPO names a mirror); the S3A connector needs $name" >&2
    exit 1
  fi
  got="$(sha1_of "$part")"
  if [ "$got" != "$sha" ]; then
    echo "install-pyspark: $url has SHA-1 $got, expected $sha (a truncated or altered download); not installing it" >&2
    exit 1
  fi
  mv -f "$part" "$dir/$name"
  part=""
done

echo "$want" > "$stamp"
echo "install-pyspark: done ($("$VENV/bin/python" -c 'import pyspark, pyarrow; print("pyspark", pyspark.__version__, "pyarrow", pyarrow.__version__)'); $jars_want in $dir)"
