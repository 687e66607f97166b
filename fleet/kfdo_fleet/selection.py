"""Which files the merge keeps (readable, one build-id, inside the window) and by how much
each file's counts are scaled (host cap, then class weight), on the driver."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from .contract import MergeError
from .footers import FileInfo
from .options import Options

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
