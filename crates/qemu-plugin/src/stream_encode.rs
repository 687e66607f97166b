//! Encoding the capture stream's records (layout: `stream_format.rs`) into a buffer.
//! Nothing here writes to a file: `stream_write.rs` does, so these are plain functions
//! of their arguments, unit-tested and round-tripped through the library's reader.

use super::stream_format::*;

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Starts a record; returns the offset of its length field (patched by `end_record`).
fn begin_record(b: &mut Vec<u8>, ty: u32) -> usize {
    put_u32(b, ty);
    let at = b.len();
    put_u32(b, 0);
    at
}

fn end_record(b: &mut [u8], at: usize) {
    let len = (b.len() - at - 4) as u32;
    b[at..at + 4].copy_from_slice(&len.to_le_bytes());
}

/// A sample: the sampled branch's target `ip` and the branch stack, newest first.
#[allow(clippy::too_many_arguments)]
pub fn sample(
    b: &mut Vec<u8>,
    time: u64,
    pid: i32,
    tid: i32,
    ip: u64,
    period: u64,
    branches: impl ExactSizeIterator<Item = (u64, u64)>,
) {
    let at = begin_record(b, REC_SAMPLE);
    put_u64(b, time);
    put_u32(b, pid as u32);
    put_u32(b, tid as u32);
    put_u64(b, ip);
    put_u64(b, period);
    put_u32(b, branches.len() as u32);
    put_u32(b, 0);
    for (from, to) in branches {
        put_u64(b, from);
        put_u64(b, to);
    }
    end_record(b, at);
}

/// What an MMAP record says: guest address, length, file offset, protection, flags,
/// device, inode and path of one mapping.
pub struct Mmap<'a> {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub addr: u64,
    pub len: u64,
    pub pgoff: u64,
    pub prot: u32,
    pub flags: u32,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub path: &'a [u8],
}

pub fn mmap(b: &mut Vec<u8>, m: &Mmap<'_>) {
    let at = begin_record(b, REC_MMAP);
    put_u64(b, m.time);
    put_u32(b, m.pid as u32);
    put_u32(b, m.tid as u32);
    put_u64(b, m.addr);
    put_u64(b, m.len);
    put_u64(b, m.pgoff);
    put_u32(b, m.prot);
    put_u32(b, m.flags);
    put_u32(b, m.maj);
    put_u32(b, m.min);
    put_u64(b, m.ino);
    put_u32(b, m.path.len() as u32);
    b.extend_from_slice(m.path);
    end_record(b, at);
}

/// A thread seen for the first time (or a vCPU reused by a new thread).
pub fn thread(b: &mut Vec<u8>, time: u64, pid: i32, tid: i32) {
    let at = begin_record(b, REC_THREAD);
    put_u64(b, time);
    put_u32(b, pid as u32);
    put_u32(b, tid as u32);
    end_record(b, at);
}

pub fn fork(b: &mut Vec<u8>, time: u64, pid: i32, ppid: i32, tid: i32, ptid: i32) {
    let at = begin_record(b, REC_FORK);
    put_u64(b, time);
    put_u32(b, pid as u32);
    put_u32(b, ppid as u32);
    put_u32(b, tid as u32);
    put_u32(b, ptid as u32);
    end_record(b, at);
}

pub fn exit(b: &mut Vec<u8>, time: u64, pid: i32, ppid: i32, tid: i32, write_failed: bool) {
    let at = begin_record(b, REC_EXIT);
    put_u64(b, time);
    put_u32(b, pid as u32);
    put_u32(b, ppid as u32);
    put_u32(b, tid as u32);
    put_u32(b, write_failed as u32);
    end_record(b, at);
}

/// A process's counters: the threads it ran, then `[user, kernel]`, each in the order of
/// `stream_format.rs`.
pub fn counters(b: &mut Vec<u8>, pid: i32, threads: u32, sides: &[[u64; COUNTER_FIELDS]; 2]) {
    let at = begin_record(b, REC_COUNTERS);
    put_u32(b, pid as u32);
    put_u32(b, threads);
    for side in sides {
        for &x in side {
            put_u64(b, x);
        }
    }
    end_record(b, at);
}

pub fn info(b: &mut Vec<u8>, guest_base: u64, first_pc: u64) {
    let at = begin_record(b, REC_INFO);
    put_u64(b, guest_base);
    put_u64(b, first_pc);
    end_record(b, at);
}

/// The measurement window opened (`open`) or closed.
pub fn window(b: &mut Vec<u8>, time: u64, open: bool) {
    let at = begin_record(b, REC_WINDOW);
    put_u64(b, time);
    put_u32(b, open as u32);
    put_u32(b, 0);
    end_record(b, at);
}

/// The lowest kernel-text address executed (system mode).
pub fn kernel_text(b: &mut Vec<u8>, lowest: u64) {
    let at = begin_record(b, REC_KERNEL_TEXT);
    put_u64(b, lowest);
    end_record(b, at);
}

/// The root process finished cleanly: the stream is complete.
pub fn end(b: &mut Vec<u8>, pid: i32) {
    let at = begin_record(b, REC_END);
    put_u32(b, pid as u32);
    end_record(b, at);
}

pub fn exec(b: &mut Vec<u8>, time: u64, pid: i32, tid: i32) {
    let at = begin_record(b, REC_EXEC);
    put_u64(b, time);
    put_u32(b, pid as u32);
    put_u32(b, tid as u32);
    end_record(b, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], o: usize) -> u32 {
        u32::from_le_bytes(b[o..o + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], o: usize) -> u64 {
        u64::from_le_bytes(b[o..o + 8].try_into().unwrap())
    }
    /// (type, payload) of the one record in `b`, checking its length field.
    fn one(b: &[u8]) -> (u32, &[u8]) {
        let len = u32_at(b, 4) as usize;
        assert_eq!(b.len(), RECORD_HEAD_LEN + len, "length field vs bytes");
        (u32_at(b, 0), &b[RECORD_HEAD_LEN..])
    }

    #[test]
    fn sample_record() {
        let mut b = Vec::new();
        sample(
            &mut b,
            7,
            100,
            -1,
            0x2000,
            1009,
            [(1, 2), (3, 4)].into_iter(),
        );
        let (ty, p) = one(&b);
        assert_eq!(ty, REC_SAMPLE);
        assert_eq!(p.len(), SAMPLE_LEN + 2 * SAMPLE_BRANCH_LEN);
        assert_eq!(u64_at(p, 0), 7);
        assert_eq!(u32_at(p, 8), 100);
        assert_eq!(u32_at(p, 12), u32::MAX);
        assert_eq!(u64_at(p, 16), 0x2000);
        assert_eq!(u64_at(p, 24), 1009);
        assert_eq!(u32_at(p, 32), 2);
        assert_eq!(u32_at(p, 36), 0);
        assert_eq!(
            [40, 48, 56, 64].map(|o| u64_at(p, o)),
            [1, 2, 3, 4],
            "entries in the order given (newest first)"
        );
        // An empty stack is a bare fixed part.
        let mut b = Vec::new();
        sample(&mut b, 0, 0, 0, 0, 1, std::iter::empty());
        assert_eq!(one(&b).1.len(), SAMPLE_LEN);
    }

    #[test]
    fn mmap_record() {
        let mut b = Vec::new();
        let m = Mmap {
            time: 1,
            pid: 2,
            tid: 3,
            addr: 0x4000_0000,
            len: 0x3000,
            pgoff: 0x1000,
            prot: 5,
            flags: MAP_FROM_MAPS,
            maj: 0xfe,
            min: 1,
            ino: 1234,
            path: b"/bin/true",
        };
        mmap(&mut b, &m);
        let (ty, p) = one(&b);
        assert_eq!(ty, REC_MMAP);
        assert_eq!(p.len(), MMAP_LEN + 9);
        assert_eq!(
            (u64_at(p, 16), u64_at(p, 24), u64_at(p, 32)),
            (0x4000_0000, 0x3000, 0x1000)
        );
        assert_eq!((u32_at(p, 40), u32_at(p, 44)), (5, 0x8000_0000));
        assert_eq!(
            (u32_at(p, 48), u32_at(p, 52), u64_at(p, 56)),
            (0xfe, 1, 1234)
        );
        assert_eq!(u32_at(p, 64), 9);
        assert_eq!(&p[68..], b"/bin/true");
    }

    #[test]
    fn fixed_length_records() {
        type Write = Box<dyn Fn(&mut Vec<u8>)>;
        let cases: Vec<(Write, u32, usize)> = vec![
            (Box::new(|b| thread(b, 1, 2, 3)), REC_THREAD, THREAD_LEN),
            (Box::new(|b| fork(b, 1, 2, 3, 4, 5)), REC_FORK, FORK_LEN),
            (Box::new(|b| exit(b, 1, 2, 3, 4, true)), REC_EXIT, EXIT_LEN),
            (
                Box::new(|b| counters(b, 2, 1, &[[1; COUNTER_FIELDS], [2; COUNTER_FIELDS]])),
                REC_COUNTERS,
                COUNTERS_LEN,
            ),
            (Box::new(|b| info(b, 1, 2)), REC_INFO, INFO_LEN),
            (Box::new(|b| end(b, 2)), REC_END, END_LEN),
            (Box::new(|b| exec(b, 1, 2, 3)), REC_EXEC, EXEC_LEN),
            (Box::new(|b| window(b, 1, true)), REC_WINDOW, WINDOW_LEN),
            (
                Box::new(|b| kernel_text(b, 1)),
                REC_KERNEL_TEXT,
                KERNEL_TEXT_LEN,
            ),
        ];
        for (write, ty, len) in cases {
            let mut b = Vec::new();
            write(&mut b);
            let (t, p) = one(&b);
            assert_eq!((t, p.len()), (ty, len), "record type {ty}");
        }
    }

    #[test]
    fn field_values() {
        let mut b = Vec::new();
        fork(&mut b, 9, 20, 10, 21, 11);
        let p = one(&b).1;
        assert_eq!(u64_at(p, 0), 9);
        assert_eq!([8, 12, 16, 20].map(|o| u32_at(p, o)), [20, 10, 21, 11]);

        let mut b = Vec::new();
        exit(&mut b, 9, 20, 10, 21, true);
        let p = one(&b).1;
        assert_eq!([8, 12, 16, 20].map(|o| u32_at(p, o)), [20, 10, 21, 1]);

        let mut b = Vec::new();
        let user = [1, 2, 3, 4, 5, 6, 7];
        let kernel = [11, 12, 13, 14, 15, 16, 17];
        counters(&mut b, -1, 3, &[user, kernel]);
        let p = one(&b).1;
        assert_eq!((u32_at(p, 0), u32_at(p, 4)), (u32::MAX, 3));
        let vals: Vec<u64> = (0..14).map(|i| u64_at(p, 8 + 8 * i)).collect();
        assert_eq!(vals[..7], user);
        assert_eq!(vals[7..], kernel);

        let mut b = Vec::new();
        info(&mut b, 0x7f00_0000_0000, 0x4000_1000);
        let p = one(&b).1;
        assert_eq!(
            (u64_at(p, 0), u64_at(p, 8)),
            (0x7f00_0000_0000, 0x4000_1000)
        );
    }

    #[test]
    fn records_append() {
        let mut b = vec![0xaa];
        end(&mut b, 5);
        thread(&mut b, 1, 2, 3);
        assert_eq!(b[0], 0xaa);
        assert_eq!(u32_at(&b, 1), REC_END);
        assert_eq!(u32_at(&b, 5), END_LEN as u32);
        assert_eq!(u32_at(&b, 9), 5);
        assert_eq!(u32_at(&b, 13), REC_THREAD);
        assert_eq!(b.len(), 1 + 2 * RECORD_HEAD_LEN + END_LEN + THREAD_LEN);
    }
}
