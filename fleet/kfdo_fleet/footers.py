"""The footer pass, on the executors: each file's footer metadata and first row, and with
--skip-bad every row checked, so that the driver can select before the data pass."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pyarrow.parquet as pq

from .contract import (FILE_COLUMNS, META_KIND, META_VERSION, SCHEMA_VERSION, bad_rows,
                       check_schema)
from .storage import is_s3, open_fs, s3_problem

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


def read_footer(path: str, full: bool, s3: Optional[dict]) -> FileInfo:
    """Metadata and first row of one file; an unreadable file gets .error, never raises
    (the driver decides between failing and --skip-bad). With `full` (--skip-bad), every
    row is checked too, so that a file damaged past its first row is dropped here, before
    the selection (kfdo merge-raw finds such a file in its second pass and reruns that
    pass without it; docs/raw-contract.md says where the two differ)."""
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
