"""The data pass and the aggregation, in Spark's own Parquet reader and SQL on the
executors: the merged rows, capped, weighted and summed per (kind, from, to)."""
from __future__ import annotations

from typing import Optional

import pyarrow as pa
import pyarrow.parquet as pq

from .contract import COLUMNS, FILE_COLUMNS, INT64_MAX, MergeError, bad_rows
from .selection import Selection
from .storage import open_fs, spark_path

def why_bad(path: str, s3: Optional[dict]) -> str:
    """A file the data pass found bad, explained by reading it on the driver (rare)."""
    try:
        fs, p = open_fs(path, s3)
        with fs.open_input_file(p) as f:
            why = bad_rows(pq.read_table(f))
    except Exception as e:  # noqa: BLE001 - named for the user
        return f"{path}: unreadable Parquet: {e}"
    return f"{path}: {why or 'a row breaks the contract'}"


def aggregate(spark, sel: Selection, s3: Optional[dict]) -> pa.Table:
    """Cap, weight, drop zeros and sum per (kind, from, to): the merged rows, sorted.

    Spark's own Parquet reader and SQL do the data pass on the executors, no Python per
    row or batch: each row is joined (broadcast) with its file's facts from the footer
    pass by `_metadata.file_path`, checked against the contract and its file's first row,
    scaled and summed, in one scan."""
    import pyarrow.compute as pc
    from pyspark.sql import functions as F

    facts_rows = [(spark_path(i.path), i.path, *sel.factors[i.path], i.build_id,
                   i.binary_path, i.host, i.host_class, i.recorder, i.window_start_ns,
                   i.window_end_ns, i.samples) for i in sel.kept]
    facts = spark.createDataFrame(
        facts_rows,
        "fpath string, path string, num long, den long, k long, e_build_id string, "
        "e_binary_path string, e_host string, e_host_class string, e_recorder string, "
        "e_window_start_ns long, e_window_end_ns long, e_samples long")
    ddl = ", ".join(f"`{name}` {'string' if typ == pa.utf8() else 'long'}"
                    for name, typ in COLUMNS)
    rows = (spark.read.schema(ddl).parquet(*[spark_path(i.path) for i in sel.kept])
            # file_path is a URI, percent-encoded; url_decode also reads `+` as a space,
            # which a URI's path never means by it (a key like `...T10:00+00:00`).
            .withColumn("fpath", F.expr("url_decode(replace(_metadata.file_path, '+', '%2B'))")))
    joined = rows.join(F.broadcast(facts), "fpath", "left")
    same = [F.col(name).eqNullSafe(F.col(f"e_{name}")) for name in FILE_COLUMNS]
    good = (F.col("kind").isin("range", "branch", "ip") & (F.col("count") > 0)
            & (F.col("from") >= 0) & (F.col("to") >= 0) & (F.col("samples") >= 0))
    for c in same:
        good = good & c
    joined = joined.withColumn("good", F.coalesce(good, F.lit(False)))
    # Exact integer math in longs, decimal(38,0) only where a product passes int64:
    # floor(c * num / den) is at most c; floor(capped * k / 1000) may pass int64 (a weight
    # above 1), which becomes null and the sum below reports. `div` is the exact integral
    # quotient (values are >= 0: the floor).
    dec = "decimal(38,0)"
    capped = F.expr(
        "CASE WHEN num = den THEN `count` ELSE coalesce(try_multiply(`count`, num) div den, "
        f"cast((cast(`count` as {dec}) * cast(num as {dec})) div cast(den as {dec}) as long)) END")
    # (Spark's cast of a decimal past long wraps instead of giving null: compared first.)
    exact = f"floor((cast(capped as {dec}) * cast(k as {dec})) / 1000)"
    weighted = F.expr(
        "CASE WHEN k = 1000 THEN capped ELSE coalesce(try_multiply(capped, k) div 1000, "
        f"CASE WHEN {exact} <= {INT64_MAX} THEN cast({exact} as long) END) END")
    # One scan: a broken row is summed under a key of its own naming its file (kind
    # "bad:PATH"), so bad files come back with the merged rows and are named before any
    # is written; the sum is try_sum, null past int64, and `over` marks a weighted count
    # that was already past it.
    scaled = (joined.withColumn("capped", capped)
              .withColumn("weighted", weighted)
              .withColumn("kind", F.when(F.col("good"), F.col("kind"))
                          .otherwise(F.concat(F.lit("bad:"), F.coalesce("path", "fpath"))))
              .where(~F.col("good") | F.col("weighted").isNull() | (F.col("weighted") > 0)))
    merged = (scaled.groupBy("kind", "from", "to")
              .agg(F.expr("try_sum(weighted)").alias("count"),
                   F.max(F.col("weighted").isNull().cast("int")).alias("over")))
    table = collect_arrow(merged)
    bad_rows_at = pc.starts_with(table.column("kind"), "bad:")
    if pc.any(bad_rows_at).as_py():
        bad = table.filter(bad_rows_at).column("kind").to_pylist()
        # The first bad file in input order, explained by reading it on the driver.
        paths = {k[len("bad:"):] for k in bad}
        first = next((i.path for i in sel.kept if i.path in paths), sorted(paths)[0])
        if first not in {i.path for i in sel.kept}:
            raise MergeError(f"Spark read a file the footer pass did not list: {first}")
        raise MergeError(why_bad(first, s3))
    table = check_int64(table)
    if table.num_rows == 0:
        raise MergeError("every count became 0 after the host cap and weights: "
                         "nothing written")
    return table.sort_by([("kind", "ascending"), ("from", "ascending"),
                          ("to", "ascending")])


def collect_arrow(df) -> pa.Table:
    """The (small) aggregated result on the driver as Arrow: kind, from, to, count, over."""
    batches = df._collect_as_arrow()
    if not batches:
        return pa.table({"kind": pa.array([], pa.utf8()), "from": pa.array([], pa.int64()),
                         "to": pa.array([], pa.int64()), "count": pa.array([], pa.int64()),
                         "over": pa.array([], pa.int32())})
    return pa.Table.from_batches(batches)


def check_int64(table: pa.Table) -> pa.Table:
    """The merged rows without the overflow mark, or the first key past int64."""
    import pyarrow.compute as pc

    past = pc.or_(pc.is_null(table.column("count")), pc.equal(table.column("over"), 1))
    if pc.any(past).as_py():
        at = pc.index(past, True).as_py()
        row = table.slice(at, 1).to_pylist()[0]
        raise MergeError(f"the merged count of {(row['kind'], row['from'], row['to'])} "
                         "exceeds int64")
    return table.select(["kind", "from", "to", "count"]).cast(pa.schema(
        [("kind", pa.utf8()), ("from", pa.int64()), ("to", pa.int64()), ("count", pa.int64())]))
