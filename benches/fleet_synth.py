#!/usr/bin/env python3
"""Synthetic host files of raw-contract schema v1, as large as an hour of LBR sampling
of a big binary gives (hundreds of thousands of distinct keys per host), for measuring
merge throughput per row where per-file overheads no longer dominate.

    python benches/fleet_synth.py OUT_DIR FILES ROWS_PER_FILE [SEED]

Real recordings of the test programs (benches/fleet_merge.sh) give host files of tens of
rows: their hot code is small. This writes FILES files of ROWS_PER_FILE rows each, keys
drawn (seeded) from a key space eight times larger than one file covers, so hosts
overlap as a fleet's do; classes web/db/batch; counts 1..10^6. Needs pyarrow and numpy
(both in the pyspark venv).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

KINDS = ["branch", "range"]  # byte order, as the contract sorts


def host_table(rng: np.random.Generator, host: int, rows: int) -> pa.Table:
    """One host's rows: distinct (kind, from, to), sorted, per-file columns constant."""
    space = rows * 4
    keys = np.unique(rng.integers(0, space * 2, size=rows * 2))[:rows]
    rng.shuffle(keys)
    keys = np.sort(keys[:rows])
    n = len(keys)
    kind_idx = keys % 2            # 0 branch, 1 range; sorted keys stay sorted per kind
    frm = (keys // 2) * 4
    to = frm + rng.integers(0, 64, size=n) * 4
    order = np.lexsort((to, frm, kind_idx))
    kind_idx, frm, to = kind_idx[order], frm[order], to[order]
    # (kind, from) pairs are distinct, so (kind, from, to) is too.
    counts = rng.integers(1, 1_000_000, size=n)
    samples = int(counts.sum() // 32) + 1
    start = 1_000_000_000 * host
    const = {
        "build_id": "5ca1ab1e" * 5,
        "binary_path": "/usr/bin/server",
        "host": f"host-{host:05d}",
        "host_class": ["web", "db", "batch"][host % 3],
        "recorder": "lbr",
    }
    cols = {name: pa.array([v] * n, pa.utf8()) for name, v in const.items()}
    cols["window_start_ns"] = pa.array(np.full(n, start), pa.int64())
    cols["window_end_ns"] = pa.array(np.full(n, start + 3_600_000_000_000), pa.int64())
    cols["samples"] = pa.array(np.full(n, samples), pa.int64())
    cols["kind"] = pa.array([KINDS[k] for k in kind_idx], pa.utf8())
    cols["from"] = pa.array(frm, pa.int64())
    cols["to"] = pa.array(to, pa.int64())
    cols["count"] = pa.array(counts, pa.int64())
    schema = pa.schema([pa.field(name, arr.type, nullable=False) for name, arr in cols.items()],
                       metadata={"kfdo.raw.schema_version": "1", "kfdo.raw.kind": "host"})
    return pa.Table.from_arrays(list(cols.values()), schema=schema)


def main() -> None:
    out, files, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    for h in range(files):
        pq.write_table(host_table(rng, h, rows), os.path.join(out, f"host-{h:05d}.parquet"))


if __name__ == "__main__":
    main()
