"""The raw contract (docs/raw-contract.md): schema v1's columns, footer keys and the
checks every row must pass, as `kfdo merge-raw` makes them."""
from __future__ import annotations

from typing import Optional

import pyarrow as pa

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
