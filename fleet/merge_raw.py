#!/usr/bin/env python3
"""Fleet-scale `kfdo merge-raw`: merges per-host raw branch-count Parquet files with Spark.

Same options and the same result as `kfdo merge-raw` (schema v1 and merge semantics:
the raw contract). Local run:

    python fleet/merge_raw.py --master 'local[2]' HOSTS_DIR -o merged.parquet

Cluster run (the executors need pyspark and pyarrow, nothing of kfdo):

    spark-submit --master yarn fleet/merge_raw.py s3://bucket/prefix/ -o s3://bucket/merged.parquet

How the work is split, and why:
- Listing, selection and the output file happen on the driver: the selection needs global
  facts (distinct build-ids, samples per host), and the output is bounded by the number of
  distinct (kind, from, to) keys, not by the fleet.
- Reading happens on the executors: first a footer pass (metadata and the first row of
  each file, with pyarrow.fs opened from each file's URI: Spark cannot read a Parquet
  footer's key-value metadata), then the data pass over the kept files only, with Spark's
  own Parquet reader and SQL, no Python per row or batch (local paths, hdfs://, and object
  stores through Hadoop's s3a connector, which s3:// inputs are read with).
- S3 (s3://, s3a://): both readers, pyarrow's and S3A, get one set of settings, made on
  the driver from the AWS_* variables (see --help) and shipped with the job, so that the
  footer pass and the data pass read the same objects and executors need no variables;
  the store is listed and checked before Spark starts, so a wrong endpoint or key is one
  line naming both, not a Java trace.
- Cap and weight are integer math in decimal(38,0) with Spark's integral division `div`
  (exact quotient, truncated; all values are non-negative, so truncation is floor).
- Spark cannot write Parquet footer key-value metadata, so the driver writes the merged
  table with pyarrow, to a temporary name then renamed: never a partial output.

The job's parts are the package `kfdo_fleet/` beside this file, one job a module. The
executors run its footer pass: the session has cloudpickle ship the package's functions by
value, as it ships __main__'s, so no --py-files is needed where the driver runs beside this
checkout (a local run, spark-submit's default client mode); spark-submit's cluster mode,
whose driver runs elsewhere, takes the package as `--py-files` (a zip of fleet/kfdo_fleet).
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional

# The package beside this file, however the job is started (python, spark-submit).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kfdo_fleet.aggregate import aggregate  # noqa: E402
from kfdo_fleet.contract import MergeError  # noqa: E402
from kfdo_fleet.footers import read_footers  # noqa: E402
from kfdo_fleet.options import Options, parse_args  # noqa: E402
from kfdo_fleet.output import merged_table  # noqa: E402
from kfdo_fleet.selection import format_dropped, select  # noqa: E402
from kfdo_fleet.spark import check_s3a, executor_error, spark_session  # noqa: E402
from kfdo_fleet.storage import (check_output_bucket, is_s3, list_inputs,  # noqa: E402
                                output_inside_input, s3_problem, s3_settings,
                                write_atomically)


def run(opts: Options) -> None:
    clock = Clock()
    inside = output_inside_input(opts.output, opts.inputs)
    if inside is not None:
        raise MergeError(f"-o {opts.output}: lies inside the input directory {inside}: a later "
                         "merge of it would read the merged file as one more host's; write "
                         "it elsewhere")
    # One set of S3 settings for the inputs and the output, checked before Spark starts.
    s3_urls = [u for u in [*opts.inputs, opts.output] if is_s3(u)]
    s3 = s3_settings(s3_urls[0]) if s3_urls else None
    files = list_inputs(opts.inputs, s3)
    if is_s3(opts.output):
        check_output_bucket(opts.output, s3)
    spark = spark_session(opts.master, s3)
    master = spark.sparkContext.master
    clock.lap("start")
    try:
        if any(is_s3(f) for f in files):
            check_s3a(spark, files, s3)
        infos = read_footers(spark, files, opts.skip_bad, s3)
        clock.lap("footers")
        sel = select(infos, opts)
        try:
            rows = aggregate(spark, sel, s3)
        except MergeError:
            raise
        except Exception as e:  # noqa: BLE001 - a file that broke in the data pass
            msg = executor_error(e, sel.kept, s3)
            if msg is None:
                raise
            raise MergeError(msg) from None
        clock.lap("merge")
    finally:
        spark.stop()
    table = merged_table(sel, rows)
    try:
        write_atomically(table, opts.output, s3)
    except OSError as e:
        problem = s3_problem(e, s3) if is_s3(opts.output) else None
        raise MergeError(f"-o {opts.output}: {problem or f'cannot write: {e}'}") from None
    clock.lap("write")
    rows_in = sum(i.rows for i in sel.kept)
    print(f"merge-raw: kept {len(sel.kept)} files of {len({i.host for i in sel.kept})} hosts; "
          f"dropped: {format_dropped(sel.dropped)}; rows in {rows_in}, "
          f"rows out {table.num_rows}; wrote {opts.output}", file=sys.stderr)
    print(f"merge-raw: seconds: {clock} (Spark master {master})", file=sys.stderr)


class Clock:
    """Wall time per phase, for the summary (the bench reads it)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.laps.append((name, now - self.last))
        self.last = now

    def __str__(self) -> str:
        return ", ".join(f"{name} {s:.2f}" for name, s in self.laps)


def main(argv: Optional[list[str]] = None) -> int:
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(opts)
    except MergeError as e:
        print(f"merge-raw: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
