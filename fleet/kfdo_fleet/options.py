"""The job's command line: the same options as `kfdo merge-raw`."""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from typing import Optional

from .contract import INT64_MAX

@dataclass
class Options:
    inputs: list[str]
    output: str
    build_id: Optional[str]
    since: Optional[int]
    until: Optional[int]
    skip_bad: bool
    host_cap: Optional[int]
    # host_class -> W*1000; classes not listed weigh 1000 (W = 1).
    weights: dict[str, int] = field(default_factory=dict)
    master: Optional[str] = None


WEIGHT_RE = re.compile(r"^([0-9]*)(?:\.([0-9]*))?$")


def parse_weight(spec: str) -> tuple[str, int]:
    """`CLASS=W` -> (CLASS, W*1000) exactly; W has at most 3 decimals (the contract)."""
    if "=" not in spec:
        raise argparse.ArgumentTypeError(f"--weight {spec!r}: expected CLASS=W")
    # The last `=` separates, as in kfdo (a class name may hold `=`, a weight cannot).
    cls, w = spec.rsplit("=", 1)
    m = WEIGHT_RE.match(w)
    whole, frac = (m.group(1), m.group(2) or "") if m else ("", "")
    if not m or not (whole or frac) or len(frac) > 3:
        raise argparse.ArgumentTypeError(
            f"--weight {spec!r}: W must be a non-negative decimal with at most 3 decimals, "
            "such as 2 or 0.5")
    return cls, int(whole or "0") * 1000 + int(frac.ljust(3, "0"))


def int64_arg(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value <= INT64_MAX:
        raise argparse.ArgumentTypeError(f"{text}: out of the int64 range")
    return value


def cap_arg(text: str) -> int:
    value = int64_arg(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: the host cap is a number of samples >= 1")
    return value


S3_HELP = """\
S3 (s3:// and s3a:// inputs and output) is configured from the environment:
  AWS_ENDPOINT_URL      a store of one's own, http:// or https://, buckets as paths
                        (unset: AWS S3)
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
                        required with AWS_ENDPOINT_URL (unset without it: the default
                        AWS credential chain)
  AWS_SESSION_TOKEN     with temporary credentials
  AWS_REGION, AWS_DEFAULT_REGION
                        the region (default: us-east-1 with AWS_ENDPOINT_URL, else the
                        bucket's)
Spark's S3A connector gets the same settings (spark.hadoop.fs.s3a.*, over any --conf
of those keys) and must be on its classpath (scripts/install-pyspark.sh puts hadoop-aws
there)."""


def parse_args(argv: list[str]) -> Options:
    p = argparse.ArgumentParser(
        prog="merge_raw.py",
        description="Merge per-host kfdo raw Parquet files (schema v1) into one, "
        "like `kfdo merge-raw`, with Spark.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=S3_HELP,
    )
    p.add_argument("inputs", nargs="+", help="files, directories or object-store prefixes "
                   "(every *.parquet under a directory or prefix, recursively)")
    p.add_argument("-o", "--output", required=True,
                   help="merged Parquet file: a path, or an s3:// URI (uploaded under a "
                   "temporary key, then copied to its own)")
    p.add_argument("--build-id", help="keep only files of this build-id")
    p.add_argument("--since", type=int64_arg, help="keep files with window_start_ns >= NS")
    p.add_argument("--until", type=int64_arg, help="keep files with window_end_ns <= NS")
    p.add_argument("--skip-bad", action="store_true",
                   help="drop unreadable files and newer schema versions instead of failing")
    p.add_argument("--host-cap", type=cap_arg, metavar="N",
                   help="scale down each host whose samples exceed N")
    p.add_argument("--weight", type=parse_weight, action="append", default=[],
                   metavar="CLASS=W", help="multiply the counts of a host class by W")
    p.add_argument("--master", help="Spark master when not run by spark-submit "
                   "(default local[2])")
    a = p.parse_args(argv)
    # A class given twice: the last one wins, like a map insert.
    weights = dict(a.weight)
    return Options(a.inputs, a.output, a.build_id, a.since, a.until, a.skip_bad,
                   a.host_cap, weights, a.master)
