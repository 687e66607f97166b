#!/usr/bin/env python3
"""Write a perf.data whose sample records are those of IN repeated N times.

    python3 benches/repeat_perf_data.py IN N OUT

For benches/profile_speed.sh: the perf.data counterpart of a `perf script` text whose
sample lines are repeated N times. The side-band records (MMAP, COMM, FORK, ...) are
written once, in place; then the samples, copy after copy. Each copy's timestamps are
shifted past the previous copy's last one, so the stream stays in time order for perf
(which sorts by time) and every copy is the recording itself, bit for bit otherwise.
The header's data size and the feature sections' offsets (which follow the data) are
updated; the features (build-ids, ...) are kept. Only file-mode, little-endian perf.data
with one sample_type layout (every attr the same) is handled: what `kfdo record` writes.
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_IDENTIFIER = 1 << 0, 1 << 1, 1 << 2, 1 << 16


def main():
    src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    b = open(src, "rb").read()
    if b[:8] != b"PERFILE2" or struct.unpack_from("<Q", b, 8)[0] != 104:
        sys.exit(f"{src}: not a file-mode little-endian perf.data")
    attr_size, attr_off, attr_len, data_off, data_len = struct.unpack_from("<QQQQQ", b, 16)
    features = b[72:104]
    # Every attr's sample_type (perf_event_attr.sample_type at +24 of each entry).
    types = {
        struct.unpack_from("<Q", b, attr_off + i + 24)[0]
        for i in range(0, attr_len, attr_size)
    }
    if len(types) != 1:
        sys.exit(f"{src}: several sample_type layouts; not handled")
    st = types.pop()
    if not st & SAMPLE_TIME:
        time_at = None
    else:
        time_at = 8 + 8 * (st & SAMPLE_IDENTIFIER != 0) + 8 * (st & SAMPLE_IP != 0) + 8 * (
            st & SAMPLE_TID != 0
        )
    side, samples = bytearray(), []
    last_time, first_time = 0, None
    pos, end = data_off, data_off + data_len
    while pos < end:
        typ, _misc, size = struct.unpack_from("<IHH", b, pos)
        if size < 8:
            sys.exit(f"{src}: bad record at {pos}")
        rec = b[pos : pos + size]
        if typ == PERF_RECORD_SAMPLE:
            samples.append(rec)
            if time_at is not None:
                t = struct.unpack_from("<Q", rec, time_at)[0]
                first_time = t if first_time is None else min(first_time, t)
                last_time = max(last_time, t)
        else:
            side += rec
        pos += size
    span = (last_time - (first_time or 0)) + 1
    data_end = data_off + data_len
    data_len_new = len(side) + n * sum(len(r) for r in samples)
    delta = data_len_new - data_len
    # Everything after the data (the attrs and their id arrays, in perf's and kfdo's
    # layout, and the feature sections) moves by `delta`: patch every file offset there.
    head, tail = bytearray(b[:data_off]), bytearray(b[data_end:])

    def patch(at):  # a u64 file offset stored at file position `at`
        buf, i = (head, at) if at < data_off else (tail, at - data_end)
        off = struct.unpack_from("<Q", buf, i)[0]
        if off >= data_end:
            struct.pack_into("<Q", buf, i, off + delta)

    for i in range(0, attr_len, attr_size):  # perf_file_attr: attr, then ids {offset, size}
        patch(attr_off + i + attr_size - 16)
    patch(24)  # attrs
    patch(56)  # event_types
    struct.pack_into("<Q", head, 48, data_len_new)
    # Feature section headers follow the data: one (offset, size) per set bit.
    nfeat = sum(bin(x).count("1") for x in struct.unpack("<4Q", features))
    for i in range(nfeat):
        patch(data_end + 16 * i)
    with open(dst, "wb") as f:
        f.write(head)
        f.write(side)
        for k in range(n):
            chunk = bytearray()
            for rec in samples:
                if time_at is not None and k:
                    rec = bytearray(rec)
                    t = struct.unpack_from("<Q", rec, time_at)[0]
                    struct.pack_into("<Q", rec, time_at, t + k * span)
                chunk += rec
            f.write(chunk)
        f.write(tail)
    print(f"{len(samples)} samples x {n} -> {len(samples) * n}")


main()
