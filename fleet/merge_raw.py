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

Everything the executors run is defined in this one file, so spark-submit ships it by
value (cloudpickle of __main__) and no --py-files is needed.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Iterator, Optional

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

SCHEMA_VERSION = 1
META_VERSION = b"kfdo.raw.schema_version"
META_KIND = b"kfdo.raw.kind"
META_HOSTS = b"kfdo.raw.hosts"
META_FILES = b"kfdo.raw.files"

# The contract's columns, in order. All NOT NULL.
COLUMNS: list[tuple[str, pa.DataType]] = [
    ("build_id", pa.utf8()),
    ("binary_path", pa.utf8()),
    ("host", pa.utf8()),
    ("host_class", pa.utf8()),
    ("recorder", pa.utf8()),
    ("window_start_ns", pa.int64()),
    ("window_end_ns", pa.int64()),
    ("samples", pa.int64()),
    ("kind", pa.utf8()),
    ("from", pa.int64()),
    ("to", pa.int64()),
    ("count", pa.int64()),
]
# Per-file columns: the same value on every row of a host file.
FILE_COLUMNS = [name for name, _ in COLUMNS[:8]]
INT64_MAX = 2**63 - 1


class MergeError(Exception):
    """A bad input or option: printed as `merge-raw: MESSAGE`, exit status 1."""


# ---------------------------------------------------------------------------------------
# Options


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


# ---------------------------------------------------------------------------------------
# Files and file systems (pyarrow.fs, so object stores work the same as local paths)

S3_SCHEMES = ("s3://", "s3a://", "s3n://")
# pyarrow's S3 errors carry the SDK's error name: the store could not be reached, or it
# refused the credentials. Neither says anything about the file, so --skip-bad never
# drops a file for them (an expired token would otherwise drop every file after it).
S3_UNREACHABLE = re.compile(r"NETWORK_CONNECTION|curlCode|Couldn't (connect|resolve)")
S3_REFUSED = re.compile(r"ACCESS_DENIED|SIGNATURE_DOES_NOT_MATCH|INVALID_ACCESS_KEY_ID|"
                        r"EXPIRED_TOKEN|INVALID_CLIENT_TOKEN_ID|UNRECOGNIZED_CLIENT|"
                        r"MISSING_AUTHENTICATION_TOKEN|INVALID_TOKEN|No credentials|"
                        r"AWS Error [A-Z_]*FORBIDDEN")
# The same for Spark's S3A connector (Java exception names in its trace).
S3A_STORE_ERROR = re.compile(r"AWSClientIOException|AccessDeniedException|SdkClientException|"
                             r"Unable to execute HTTP request|AWSBadRequestException|"
                             r"AWSServiceIOException|NoAuthWithAWSException|"
                             r"UnknownHostException|ConnectException|AWSRedirectException")


def is_s3(uri: str) -> bool:
    return uri.startswith(S3_SCHEMES)


def s3_settings(url: str, env=os.environ) -> dict:
    """The S3 settings both readers use, from the usual AWS variables; `url` (the first
    s3 input or output) is named in errors. A plain dict of strings: it travels to the
    executors inside the footer pass's closure, as spark.hadoop.* travels in the conf, so
    executors need no variables of their own."""
    endpoint = (env.get("AWS_ENDPOINT_URL") or "").strip().rstrip("/")
    scheme = host = ""
    if endpoint:
        from urllib.parse import urlsplit
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path \
                or parts.query or parts.fragment:
            raise MergeError(f"AWS_ENDPOINT_URL={endpoint!r}: expected http://HOST[:PORT] or "
                             "https://HOST[:PORT], the S3 endpoint")
        scheme, host = parts.scheme, parts.netloc
    key = env.get("AWS_ACCESS_KEY_ID") or ""
    secret = env.get("AWS_SECRET_ACCESS_KEY") or ""
    token = env.get("AWS_SESSION_TOKEN") or ""
    if bool(key) != bool(secret):
        have, lack = (("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if key else
                      ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID"))
        raise MergeError(f"{url}: {have} is set but {lack} is not: set both (and "
                         "AWS_SESSION_TOKEN for temporary credentials)")
    if not key and endpoint:
        # Without keys each reader would fall back to its default chain, whose other
        # sources (instance roles) exist on AWS only, not at a store of one's own.
        raise MergeError(f"{url}: no credentials for the S3 endpoint {endpoint} "
                         "(AWS_ENDPOINT_URL): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                         "(and AWS_SESSION_TOKEN for temporary credentials)")
    if token and not key:
        raise MergeError(f"{url}: AWS_SESSION_TOKEN is set without AWS_ACCESS_KEY_ID and "
                         "AWS_SECRET_ACCESS_KEY: set all three")
    # A store of one's own takes any region for signing; us-east-1 is the usual one. On
    # AWS without a region, the bucket's own is looked up (as pyarrow's from_uri does).
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or \
        ("us-east-1" if endpoint else "")
    return {"endpoint": endpoint, "scheme": scheme, "host": host, "access_key": key,
            "secret_key": secret, "session_token": token, "region": region}


def s3a_conf(s3: dict) -> dict[str, str]:
    """The same settings for Hadoop's S3A connector, which Spark's data pass reads with."""
    conf: dict[str, str] = {}
    if s3["endpoint"]:
        # Stores of one's own serve buckets as paths, not as host names.
        conf["fs.s3a.endpoint"] = s3["endpoint"]
        conf["fs.s3a.path.style.access"] = "true"
        conf["fs.s3a.connection.ssl.enabled"] = str(s3["scheme"] == "https").lower()
    if s3["region"]:
        conf["fs.s3a.endpoint.region"] = s3["region"]
    if s3["access_key"]:
        conf["fs.s3a.access.key"] = s3["access_key"]
        conf["fs.s3a.secret.key"] = s3["secret_key"]
        if s3["session_token"]:
            conf["fs.s3a.session.token"] = s3["session_token"]
            conf["fs.s3a.aws.credentials.provider"] = \
                "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
        else:
            conf["fs.s3a.aws.credentials.provider"] = \
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
    return {f"spark.hadoop.{k}": v for k, v in conf.items()}


_S3_FILESYSTEMS: dict[tuple, pafs.FileSystem] = {}


def s3_filesystem(s3: dict, bucket: str) -> pafs.FileSystem:
    """pyarrow's S3 file system for these settings, one per process (per bucket only
    where the region must be looked up): the footer pass opens every file."""
    region = s3["region"]
    cache_key = (tuple(sorted(s3.items())), "" if region else bucket)
    fs = _S3_FILESYSTEMS.get(cache_key)
    if fs is None:
        if not region:
            region = pafs.resolve_s3_region(bucket)
        kwargs: dict = {"region": region}
        if s3["host"]:
            # With endpoint_override pyarrow addresses buckets as paths.
            kwargs.update(endpoint_override=s3["host"], scheme=s3["scheme"])
        if s3["access_key"]:
            kwargs.update(access_key=s3["access_key"], secret_key=s3["secret_key"],
                          session_token=s3["session_token"] or None)
        fs = _S3_FILESYSTEMS[cache_key] = pafs.S3FileSystem(**kwargs)
    return fs


def s3_problem(e: BaseException, s3: Optional[dict]) -> Optional[str]:
    """What an S3 error says about the store (unreachable, credentials refused), on one
    line, naming the endpoint and the variables; None for any other error."""
    if s3 is None:
        return None
    text = " ".join(str(e).split())
    where = (f"the S3 endpoint {s3['endpoint']} (AWS_ENDPOINT_URL)" if s3["endpoint"]
             else "AWS S3 (AWS_ENDPOINT_URL is not set)")
    if S3_UNREACHABLE.search(text):
        return f"cannot reach {where}: {text}"
    if S3_REFUSED.search(text):
        if s3["access_key"]:
            creds = (f"AWS_ACCESS_KEY_ID={s3['access_key']} with AWS_SECRET_ACCESS_KEY"
                     + (" and AWS_SESSION_TOKEN" if s3["session_token"] else ""))
        else:
            creds = ("the default AWS credential chain, as AWS_ACCESS_KEY_ID and "
                     "AWS_SECRET_ACCESS_KEY are not set")
        return f"{where} refused the credentials ({creds}): {text}"
    return None


def open_fs(uri: str, s3: Optional[dict] = None) -> tuple[pafs.FileSystem, str]:
    """The file system and path of a local path or URI (s3a:// is read as s3://, with
    `s3`'s settings; made from the environment when not given)."""
    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    if is_s3(uri):
        # pyarrow's object-store paths start with the bucket.
        path = uri.split("://", 1)[1].rstrip("/")
        return s3_filesystem(s3 if s3 is not None else s3_settings(uri),
                             path.split("/", 1)[0]), path
    return pafs.FileSystem.from_uri(uri)


def to_uri(fs: pafs.FileSystem, path: str, original: str) -> str:
    """A name for a listed file that an executor can open again with open_fs."""
    if isinstance(fs, pafs.LocalFileSystem):
        return path
    scheme, rest = original.split("://", 1)
    if scheme in ("s3", "s3a", "s3n", "gs", "gcs"):
        # pyarrow's object-store paths start with the bucket.
        return f"{'s3' if scheme.startswith('s3') else scheme}://{path}"
    # hdfs://namenode:port/path: pyarrow's path is /path, the authority is the URI's.
    authority = rest.split("/", 1)[0]
    return f"{scheme}://{authority}/{path.lstrip('/')}"


def list_inputs(inputs: list[str], s3: Optional[dict]) -> list[str]:
    """Every input file: files as given, directories (and object-store prefixes) expanded
    to their *.parquet (recursively, sorted by path). A missing input, an empty directory,
    or a store that cannot be listed is an error."""
    files: list[str] = []
    for item in inputs:
        try:
            fs, path = open_fs(item, s3)
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.File:
                files.append(to_uri(fs, path, item))
                continue
            # Object stores have no directories: a prefix is listed as one.
            if info.type != pafs.FileType.Directory and "://" not in item:
                raise MergeError(f"{item}: no such file or directory")
            listed = fs.get_file_info(pafs.FileSelector(path.rstrip("/"), recursive=True))
        except FileNotFoundError:
            raise MergeError(f"{item}: no such file, directory or prefix") from None
        except OSError as e:
            problem = s3_problem(e, s3) if is_s3(item) else None
            raise MergeError(f"{item}: {problem or f'cannot list: {e}'}") from None
        found = sorted(i.path for i in listed
                       if i.type == pafs.FileType.File and i.path.endswith(".parquet"))
        if not found:
            raise MergeError(f"{item}: no *.parquet files in it")
        files.extend(to_uri(fs, f, item) for f in found)
    return files


# ---------------------------------------------------------------------------------------
# Footer pass (runs on the executors)


@dataclass
class FileInfo:
    """What the footer pass learns about one input file."""
    path: str
    error: Optional[str] = None
    # The error is the store's (unreachable, credentials refused), not the file's.
    store_error: bool = False
    rows: int = 0
    build_id: str = ""
    binary_path: str = ""
    host: str = ""
    host_class: str = ""
    recorder: str = ""
    window_start_ns: int = 0
    window_end_ns: int = 0
    samples: int = 0


def check_schema(schema: pa.Schema) -> Optional[str]:
    """Why a file's Arrow schema is not the contract's, or None."""
    names = schema.names
    for name, typ in COLUMNS:
        if name not in names:
            return f"no column {name!r}"
        got = schema.field(name).type
        if got != typ and not (typ == pa.utf8() and got == pa.large_utf8()):
            return f"column {name!r} is {got}, expected {typ}"
    return None


def read_footer(path: str, full: bool, s3: Optional[dict]) -> FileInfo:
    """Metadata and first row of one file; an unreadable file gets .error, never raises
    (the driver decides between failing and --skip-bad). With `full` (--skip-bad), every
    row is checked too, so that a file damaged past its first row is dropped here, as
    kfdo merge-raw's first pass drops it, and not found bad after the selection."""
    info = FileInfo(path)
    try:
        fs, p = open_fs(path, s3)
        with fs.open_input_file(p) as f:
            pf = pq.ParquetFile(f)
            # The Parquet footer's own key-value metadata: a writer may leave the keys out
            # of the embedded Arrow schema (kfdo's does).
            meta = pf.metadata.metadata or {}
            version = meta.get(META_VERSION)
            if version is None:
                info.error = "no kfdo.raw.schema_version in the footer: not a kfdo raw file"
                return info
            try:
                v = int(version.decode())
            except ValueError:
                info.error = f"schema version {version.decode(errors='replace')!r} is not a number"
                return info
            if v == 0:
                info.error = "schema version 0 does not exist"
                return info
            if v > SCHEMA_VERSION:
                info.error = (f"schema version {v} is newer than this job's "
                              f"{SCHEMA_VERSION}; upgrade kfdo's fleet job")
                return info
            kind = meta.get(META_KIND, b"").decode(errors="replace")
            if kind not in ("host", "merged"):
                info.error = f"footer kfdo.raw.kind is {kind!r}, expected 'host' or 'merged'"
                return info
            why = check_schema(pf.schema_arrow)
            if why:
                info.error = why
                return info
            info.rows = pf.metadata.num_rows
            if info.rows == 0:
                # An empty file holds no counts; it still has to say which binary it is of,
                # which only its rows do. Treated as unreadable.
                info.error = "no rows"
                return info
            if full:
                why = bad_rows(pf.read())
                if why:
                    info.error = why
                    return info
            first = next(pf.iter_batches(batch_size=1, columns=FILE_COLUMNS)).to_pylist()[0]
    except Exception as e:  # noqa: BLE001 - any reader failure is "unreadable", named
        problem = s3_problem(e, s3) if is_s3(path) else None
        info.error = problem or f"unreadable Parquet: {e}"
        info.store_error = problem is not None
        return info
    for name in FILE_COLUMNS:
        if first[name] is None:
            info.error = f"column {name!r} is null"
            return info
        setattr(info, name, first[name])
    return info


def read_footers(spark, files: list[str], full: bool, s3: Optional[dict]) -> list[FileInfo]:
    """The footer pass, spread over the executors, in input order."""
    sc = spark.sparkContext
    slices = max(1, min(len(files), sc.defaultParallelism * 4))
    # Plain dicts cross the wire: a dataclass of __main__ does not unpickle in a worker.
    found = sc.parallelize(files, slices).map(lambda p: vars(read_footer(p, full, s3))).collect()
    return [FileInfo(**d) for d in found]


# ---------------------------------------------------------------------------------------
# Selection (driver)


@dataclass
class Selection:
    kept: list[FileInfo]
    dropped: dict[str, int]
    # Per kept file: (cap numerator, cap denominator, weight k); count c becomes
    # floor(floor(c * num / den) * k / 1000).
    factors: dict[str, tuple[int, int, int]]


def select(infos: list[FileInfo], opts: Options) -> Selection:
    dropped = {"bad": 0, "build-id": 0, "window": 0}
    good: list[FileInfo] = []
    for info in infos:
        if info.error is None:
            good.append(info)
        elif opts.skip_bad and not info.store_error:
            print(f"merge-raw: skipping {info.path}: {info.error}", file=sys.stderr)
            dropped["bad"] += 1
        elif info.store_error:
            raise MergeError(f"{info.path}: {info.error}")
        else:
            raise MergeError(f"{info.path}: {info.error} (--skip-bad drops such files)")

    if opts.build_id is None:
        # Among the readable inputs, before the time window: one binary per merge.
        first = good[0] if good else None
        for info in good[1:]:
            if info.build_id != first.build_id:
                raise MergeError(
                    f"inputs of different binaries: {first.path} has build-id "
                    f"{first.build_id!r}, {info.path} has {info.build_id!r}; "
                    "choose one with --build-id")
    kept: list[FileInfo] = []
    for info in good:
        if opts.build_id is not None and info.build_id != opts.build_id:
            dropped["build-id"] += 1
        elif (opts.since is not None and info.window_start_ns < opts.since) or (
                opts.until is not None and info.window_end_ns > opts.until):
            dropped["window"] += 1
        else:
            kept.append(info)
    if not kept:
        raise MergeError("no input files left after selection "
                         f"(dropped: {format_dropped(dropped)})")

    host_samples: dict[str, int] = {}
    for info in kept:
        host_samples[info.host] = host_samples.get(info.host, 0) + info.samples
    factors: dict[str, tuple[int, int, int]] = {}
    for info in kept:
        s = host_samples[info.host]
        num, den = (opts.host_cap, s) if opts.host_cap is not None and s > opts.host_cap \
            else (1, 1)
        factors[info.path] = (num, den, opts.weights.get(info.host_class, 1000))
    return Selection(kept, dropped, factors)


def scale(value: int, factor: tuple[int, int, int]) -> int:
    """The contract's cap then weight, on Python's exact integers."""
    num, den, k = factor
    return (value * num // den) * k // 1000


def format_dropped(dropped: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in dropped.items())


# ---------------------------------------------------------------------------------------
# Data pass (executors) and aggregation (Spark SQL)

def spark_path(path: str) -> str:
    """How Spark's own reader names a listed file (its `_metadata.file_path`): local files
    as file: URIs, object stores through Hadoop's s3a connector."""
    if "://" not in path:
        return "file:" + path
    if path.startswith("s3://"):
        return "s3a://" + path[len("s3://"):]
    return path


def bad_rows(table: pa.Table) -> Optional[str]:
    """Why a file's rows break the contract, or None: the checks kfdo's reader makes on
    every row (whole-column here)."""
    import pyarrow.compute as pc

    for name in table.column_names:
        if table.column(name).null_count:
            return f"column {name!r} has nulls; every column is NOT NULL"
    if table.num_rows == 0:
        return None
    for name in FILE_COLUMNS:
        if len(pc.unique(table.column(name))) > 1:
            return (f"column {name!r} is not the same on every row: a file holds one "
                    f"binary (one build-id) of one host; split it by {name}")
    if not pc.all(pc.is_in(table.column("kind"),
                           value_set=pa.array(["range", "branch", "ip"]))).as_py():
        return "a row's kind is not range, branch or ip"
    if pc.min(table.column("count")).as_py() <= 0:
        return "a row's count is not > 0"
    if pc.min(table.column("samples")).as_py() < 0:
        return "samples is negative"
    for name in ("from", "to"):
        if pc.min(table.column(name)).as_py() < 0:
            return f"a row's {name!r} is negative (addresses are offsets >= 0)"
    return None


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


# ---------------------------------------------------------------------------------------
# Output (driver)


def merged_table(sel: Selection, rows: pa.Table) -> pa.Table:
    """The contract's merged file: per-file columns constant, footer metadata."""
    kept = sel.kept
    recorders = {i.recorder for i in kept}
    samples = sum(scale(i.samples, sel.factors[i.path]) for i in kept)
    if samples > INT64_MAX:
        raise MergeError(f"the merged samples exceed int64 ({samples})")
    n = rows.num_rows
    constants = {
        "build_id": kept[0].build_id,
        "binary_path": min(i.binary_path for i in kept),
        "host": "",
        "host_class": "",
        "recorder": recorders.pop() if len(recorders) == 1 else "mixed",
        "window_start_ns": min(i.window_start_ns for i in kept),
        "window_end_ns": max(i.window_end_ns for i in kept),
        "samples": samples,
    }
    metadata = {
        META_VERSION: str(SCHEMA_VERSION).encode(),
        META_KIND: b"merged",
        META_HOSTS: str(len({i.host for i in kept})).encode(),
        META_FILES: str(len(kept)).encode(),
    }
    schema = pa.schema([pa.field(name, typ, nullable=False) for name, typ in COLUMNS],
                       metadata=metadata)
    arrays = [pa.array([constants[name]] * n, typ) if name in constants else rows.column(name)
              for name, typ in COLUMNS]
    return pa.Table.from_arrays(arrays, schema=schema)


def write_atomically(table: pa.Table, output: str, s3: Optional[dict]) -> None:
    """Write to a temporary name beside the output, then rename: never a partial file.
    (On object stores the upload goes to a temporary key, copied to the output's key
    once complete: a failed upload leaves no object under the output's name.)"""
    fs, path = open_fs(output, s3)
    parent, name = os.path.split(path)
    if isinstance(fs, pafs.LocalFileSystem):
        os.makedirs(parent or ".", exist_ok=True)
    tmp = f"{parent}/.{name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        pq.write_table(table, tmp, filesystem=fs)
        fs.move(tmp, path)
    except BaseException:
        try:
            fs.delete_file(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------
# Driver


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


def output_inside_input(output: str, inputs: list[str]) -> Optional[str]:
    """The input directory or prefix the output would land in, if any: a later merge of
    that directory would read the merged file as one more host's (kfdo merge-raw refuses
    the same)."""
    def norm(p: str) -> str:
        if is_s3(p):
            # One store, three names.
            p = "s3://" + p.split("://", 1)[1]
        return (p if "://" in p else os.path.realpath(p)).rstrip("/")
    out = norm(output)
    for item in inputs:
        if "://" not in item and not os.path.isdir(item):
            continue
        base = norm(item)
        if out.startswith(base + "/"):
            return item
    return None


def check_output_bucket(output: str, s3: dict) -> None:
    """An s3 output's bucket exists and the credentials reach it: found before the job,
    not after it."""
    try:
        fs, path = open_fs(output, s3)
        bucket = path.split("/", 1)[0]
        if "/" not in path:
            raise MergeError(f"-o {output}: an object needs a key inside the bucket")
        found = fs.get_file_info(bucket).type == pafs.FileType.Directory
    except OSError as e:
        raise MergeError(f"-o {output}: {s3_problem(e, s3) or e}") from None
    if not found:
        raise MergeError(f"-o {output}: no bucket {bucket!r} at "
                         f"{s3['endpoint'] or 'AWS S3'}")


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
