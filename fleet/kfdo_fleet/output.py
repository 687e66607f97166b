"""The merged file the contract defines: per-file columns constant, footer metadata."""
from __future__ import annotations

import pyarrow as pa

from .contract import (COLUMNS, INT64_MAX, META_FILES, META_HOSTS, META_KIND, META_VERSION,
                       SCHEMA_VERSION, MergeError)
from .selection import Selection, scale

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
