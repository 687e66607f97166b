"""The Spark session (local or submitted, S3A configured like pyarrow) and what a failed
Spark job says about the file it could not read."""
from __future__ import annotations

import os
import sys
from typing import Optional

from .contract import MergeError
from .footers import FileInfo
from .storage import S3A_STORE_ERROR, is_s3, s3a_conf, spark_path

def spark_session(master: Optional[str], s3: Optional[dict]):
    from pyspark import SparkConf
    from pyspark.sql import SparkSession

    conf = SparkConf()
    # spark-submit starts the JVM first and hands its gateway to this process; its
    # --master is in the JVM's conf then, which a SparkConf made before the context
    # cannot see yet: decide by the gateway, not by conf.contains("spark.master").
    submitted = "PYSPARK_GATEWAY_PORT" in os.environ
    if master is not None or not submitted:
        # Run directly (not by spark-submit): local, and the workers must be this very
        # interpreter (it has pyarrow), not whatever `python3` is on PATH.
        conf.setMaster(master or "local[2]")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf.setAppName("kfdo merge-raw")
    conf.setIfMissing("spark.ui.enabled", "false")
    conf.setIfMissing("spark.ui.showConsoleProgress", "false")
    conf.setIfMissing("spark.sql.execution.arrow.pyspark.enabled", "true")
    if s3 is not None:
        # The S3 settings the footer pass uses, for the data pass. They override a
        # --conf or spark-defaults of the same key (this SparkConf is applied over the
        # JVM's): both readers must see the same store with the same credentials.
        for key, value in s3a_conf(s3).items():
            conf.set(key, value)
    # The executors run this package's functions (the footer pass): shipped by value,
    # as cloudpickle ships __main__'s, so no --py-files is needed where the driver runs
    # beside this checkout (a local run, spark-submit's client mode).
    from pyspark import cloudpickle

    import kfdo_fleet
    cloudpickle.register_pickle_by_value(kfdo_fleet)
    spark = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not conf.contains("spark.sql.shuffle.partitions"):
        # The aggregate is bounded by the distinct keys (thousands to millions), not by
        # the fleet: two partitions per core spread it; Spark's default 200 costs more
        # than it spreads on a small cluster.
        spark.conf.set("spark.sql.shuffle.partitions",
                       str(max(2, 2 * spark.sparkContext.defaultParallelism)))
    return spark


def check_s3a(spark, files: list[str], s3: dict) -> None:
    """Spark reads s3:// inputs with Hadoop's S3A connector, which Spark does not bundle:
    without it the data pass would fail only after the footer pass, with a Java trace.
    Then one request per bucket, before any in parallel: Hadoop 3.3.4's session-token
    provider (TemporaryAWSCredentialsProvider) initializes on first use without a lock,
    and Spark's first step checks every input from a pool of threads, where all but the
    first find "no credentials" (HADOOP-18233, fixed in 3.3.5). The connector instance is
    cached per bucket in the JVM, so local executors share the initialized one; a
    cluster's executors retry a task that lost the race."""
    sc = spark.sparkContext
    try:
        sc._jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(
            "s3a", sc._jsc.hadoopConfiguration())
    except Exception:  # noqa: BLE001 - py4j wraps the ClassNotFoundException
        # hadoop-aws must be the very version of Spark's Hadoop.
        version = sc._jvm.org.apache.hadoop.util.VersionInfo.getVersion()
        raise MergeError(
            "Spark has no S3A connector (org.apache.hadoop.fs.s3a.S3AFileSystem, in "
            "hadoop-aws) to read s3:// inputs: run scripts/install-pyspark.sh, or give "
            f"spark-submit --packages org.apache.hadoop:hadoop-aws:{version} (the version of "
            "Spark's Hadoop)") from None
    first_of_bucket: dict[str, str] = {}
    for path in files:
        if is_s3(path):
            first_of_bucket.setdefault(path.split("://", 1)[1].split("/", 1)[0], path)
    for path in first_of_bucket.values():
        try:
            jpath = sc._jvm.org.apache.hadoop.fs.Path(spark_path(path))
            jpath.getFileSystem(sc._jsc.hadoopConfiguration()).getFileStatus(jpath)
        except Exception as e:  # noqa: BLE001 - a Java exception through py4j, named
            raise MergeError(executor_error(e, [FileInfo(path)], s3)
                             or f"{path}: {str(e).strip().splitlines()[0]}") from None


def executor_error(e: BaseException, kept: list[FileInfo],
                   s3: Optional[dict]) -> Optional[str]:
    """The file a failed Spark job names in its Java trace (Spark's reader says which
    file it could not read), with the trace's line that names it, if it names one we
    read. An S3A failure to reach the store or to be let in is said to be that, not a
    bad file."""
    text = str(e)
    lines = [line.strip() for line in text.strip().splitlines()] or [type(e).__name__]
    for info in kept:
        names = (spark_path(info.path), info.path)
        if any(n in text for n in names):
            # py4j's first line only names the Java call; the cause names the file.
            line = next((x for x in lines if any(n in x for n in names)), lines[0])
            line = line.lstrip(":").strip()
            if is_s3(info.path) and s3 is not None and S3A_STORE_ERROR.search(line):
                where = (f"the S3 endpoint {s3['endpoint']} (AWS_ENDPOINT_URL)"
                         if s3["endpoint"] else "AWS S3")
                return f"{info.path}: Spark's S3A connector cannot read it from {where}: {line}"
            return f"{info.path}: unreadable Parquet: {line}"
    return None
