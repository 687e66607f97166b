//! The reader of the capture stream the plugin writes. The format (magic, header, record
//! types and layouts, flags) is defined once, in `crates/qemu-plugin/src/stream_format.rs`,
//! which the plugin and this library both compile ([`super::stream_format`]).

use super::maps::Map;
use super::stream_format::*;
use crate::error::Error;
use std::path::Path;

pub use super::stream_format::{
    Counts, Header, MAGIC, MAP_FROM_MAPS, REC_COUNTERS, REC_END, REC_EXEC, REC_EXIT, REC_FORK,
    REC_INFO, REC_MMAP, REC_SAMPLE, REC_THREAD,
};

/// The finished capture file, mapped rather than read: a long recording's stream can be
/// far larger than the memory it is worth holding (and mapping saves a copy).
pub(crate) enum CaptureBytes {
    Mapped(memmap2::Mmap),
    /// Missing or empty: QEMU did not get as far as writing the header.
    Empty,
}

impl std::ops::Deref for CaptureBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            CaptureBytes::Mapped(m) => m,
            CaptureBytes::Empty => &[],
        }
    }
}

/// Maps the capture QEMU has finished writing (it has exited). With
/// `KFDO_VLBR_KEEP_STREAM=PATH` a copy is kept there, for debugging the plugin.
pub(crate) fn map_capture(path: &Path) -> CaptureBytes {
    let bytes = match std::fs::File::open(path) {
        Ok(f) if f.metadata().map(|m| m.len() > 0).unwrap_or(false) => {
            // SAFETY: `Mmap::map`'s contract is that the file not change while mapped: it
            // is in this process's private temporary directory and QEMU, its only
            // writer, has exited.
            match unsafe { memmap2::Mmap::map(&f) } {
                Ok(m) => CaptureBytes::Mapped(m),
                Err(_) => CaptureBytes::Empty,
            }
        }
        _ => CaptureBytes::Empty,
    };
    if let Some(keep) = std::env::var_os("KFDO_VLBR_KEEP_STREAM") {
        let _ = std::fs::write(keep, &*bytes);
    }
    bytes
}

/// A sample, borrowing its branch entries (`(from, to)` pairs, newest first) from the stream.
#[derive(Debug, Clone, Copy)]
pub struct SampleRec<'a> {
    pub time: u64,
    pub pid: i32,
    pub tid: i32,
    pub ip: u64,
    pub period: u64,
    pub nr: usize,
    entries: &'a [u8],
}

impl<'a> SampleRec<'a> {
    /// Branch records, newest first.
    pub fn branches(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + 'a {
        self.entries
            .chunks_exact(SAMPLE_BRANCH_LEN)
            .map(|c| (le64(&c[..8]), le64(&c[8..16])))
    }
}

#[derive(Debug, Clone)]
pub enum Event<'a> {
    Sample(SampleRec<'a>),
    Mmap(Map),
    /// A thread seen for the first time (or a vCPU reused by a new thread).
    Thread {
        time: u64,
        pid: i32,
        tid: i32,
    },
    Fork {
        time: u64,
        pid: i32,
        ppid: i32,
        tid: i32,
        ptid: i32,
    },
    Exit {
        time: u64,
        pid: i32,
        ppid: i32,
        tid: i32,
        write_failed: bool,
    },
    Counters {
        pid: i32,
        /// The guest threads the process started, itself included (0: unknown).
        threads: u32,
        counts: Counts,
    },
    /// Guest base (host - guest address) and the first executed guest address.
    Info {
        guest_base: u64,
        first_pc: u64,
    },
    /// The root process finished cleanly.
    End {
        pid: i32,
    },
    /// The measurement window opened (`open`) or closed (`window=markers`).
    Window {
        time: u64,
        open: bool,
    },
    /// The lowest kernel-text address the guest executed (system mode).
    KernelText {
        lowest: u64,
    },
    /// The guest called execve (the new image runs natively, unrecorded).
    Exec {
        time: u64,
        pid: i32,
        tid: i32,
    },
    Unknown {
        ty: u32,
    },
}

fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}
fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes(b[..4].try_into().unwrap())
}

/// A parsed stream over borrowed bytes.
pub struct Stream<'a> {
    pub header: Header,
    data: &'a [u8],
}

/// How a stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Every byte belongs to a whole record.
    Clean,
    /// The last record was cut at this byte offset (writer killed or disk full).
    Truncated { offset: usize },
}

impl<'a> Stream<'a> {
    pub fn parse(path: &Path, data: &'a [u8]) -> Result<Stream<'a>, Error> {
        let header = Header::decode(data).ok_or_else(|| Error::Stream {
            path: path.to_path_buf(),
            offset: 0,
            what: if data.is_empty() {
                "the capture stream is empty: the QEMU plugin did not start".into()
            } else {
                "not a vLBR capture stream (bad magic or short header)".into()
            },
        })?;
        Ok(Stream { header, data })
    }

    /// Iterates over the records; the iterator's `tail()` says whether the end was clean.
    pub fn events(&self) -> Events<'a> {
        Events {
            data: self.data,
            pos: HEADER_LEN,
            tail: Tail::Clean,
        }
    }
}

pub struct Events<'a> {
    data: &'a [u8],
    pos: usize,
    tail: Tail,
}

impl<'a> Events<'a> {
    pub fn tail(&self) -> Tail {
        self.tail
    }
}

impl<'a> Iterator for Events<'a> {
    type Item = Event<'a>;
    fn next(&mut self) -> Option<Event<'a>> {
        let d = self.data;
        if self.pos >= d.len() {
            return None;
        }
        if d.len() - self.pos < RECORD_HEAD_LEN {
            self.tail = Tail::Truncated { offset: self.pos };
            self.pos = d.len();
            return None;
        }
        let ty = le32(&d[self.pos..]);
        let len = le32(&d[self.pos + 4..]) as usize;
        let start = self.pos + RECORD_HEAD_LEN;
        if d.len() - start < len {
            self.tail = Tail::Truncated { offset: self.pos };
            self.pos = d.len();
            return None;
        }
        let p = &d[start..start + len];
        self.pos = start + len;
        let ev = match decode(ty, p) {
            Some(e) => e,
            None => {
                self.tail = Tail::Truncated {
                    offset: start - RECORD_HEAD_LEN,
                };
                self.pos = d.len();
                return None;
            }
        };
        Some(ev)
    }
}

fn decode(ty: u32, p: &[u8]) -> Option<Event<'_>> {
    let need = |n: usize| if p.len() >= n { Some(()) } else { None };
    Some(match ty {
        REC_SAMPLE => {
            need(SAMPLE_LEN)?;
            let nr = le32(&p[32..]) as usize;
            let entries = p.get(SAMPLE_LEN..SAMPLE_LEN + nr.checked_mul(SAMPLE_BRANCH_LEN)?)?;
            Event::Sample(SampleRec {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                tid: le32(&p[12..]) as i32,
                ip: le64(&p[16..]),
                period: le64(&p[24..]),
                nr,
                entries,
            })
        }
        REC_MMAP => {
            need(MMAP_LEN)?;
            let plen = le32(&p[64..]) as usize;
            let path = p.get(MMAP_LEN..MMAP_LEN + plen)?.to_vec();
            Event::Mmap(Map {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                tid: le32(&p[12..]) as i32,
                start: le64(&p[16..]),
                len: le64(&p[24..]),
                pgoff: le64(&p[32..]),
                prot: le32(&p[40..]),
                flags: le32(&p[44..]),
                maj: le32(&p[48..]),
                min: le32(&p[52..]),
                ino: le64(&p[56..]),
                path,
            })
        }
        REC_THREAD => {
            need(THREAD_LEN)?;
            Event::Thread {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                tid: le32(&p[12..]) as i32,
            }
        }
        REC_FORK => {
            need(FORK_LEN)?;
            Event::Fork {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                ppid: le32(&p[12..]) as i32,
                tid: le32(&p[16..]) as i32,
                ptid: le32(&p[20..]) as i32,
            }
        }
        REC_EXIT => {
            need(EXIT_LEN)?;
            Event::Exit {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                ppid: le32(&p[12..]) as i32,
                tid: le32(&p[16..]) as i32,
                write_failed: le32(&p[20..]) != 0,
            }
        }
        REC_COUNTERS => {
            need(COUNTERS_LEN)?;
            let v = |i: usize| le64(&p[8 + i * 8..]);
            let side = |k: usize| std::array::from_fn(|f| v(k * COUNTER_FIELDS + f));
            let c = Counts::from_sides(&[side(0), side(1)]);
            Event::Counters {
                pid: le32(p) as i32,
                threads: le32(&p[4..]),
                counts: c,
            }
        }
        REC_INFO => {
            need(INFO_LEN)?;
            Event::Info {
                guest_base: le64(p),
                first_pc: le64(&p[8..]),
            }
        }
        REC_END => {
            need(END_LEN)?;
            Event::End {
                pid: le32(p) as i32,
            }
        }
        REC_EXEC => {
            need(EXEC_LEN)?;
            Event::Exec {
                time: le64(p),
                pid: le32(&p[8..]) as i32,
                tid: le32(&p[12..]) as i32,
            }
        }
        REC_WINDOW => {
            need(WINDOW_LEN)?;
            Event::Window {
                time: le64(p),
                open: le32(&p[8..]) != 0,
            }
        }
        REC_KERNEL_TEXT => {
            need(KERNEL_TEXT_LEN)?;
            Event::KernelText { lowest: le64(p) }
        }
        _ => Event::Unknown { ty },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&7u64.to_le_bytes());
        v.extend_from_slice(&32u32.to_le_bytes());
        v.extend_from_slice(&0u32.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&42u32.to_le_bytes());
        v.extend_from_slice(&5u64.to_le_bytes());
        v
    }

    #[test]
    fn sample_and_truncation() {
        let mut v = header();
        let mut s = Vec::new();
        s.extend_from_slice(&100u64.to_le_bytes()); // time
        s.extend_from_slice(&42u32.to_le_bytes());
        s.extend_from_slice(&43u32.to_le_bytes());
        s.extend_from_slice(&0x20u64.to_le_bytes()); // ip
        s.extend_from_slice(&7u64.to_le_bytes()); // period
        s.extend_from_slice(&1u32.to_le_bytes());
        s.extend_from_slice(&0u32.to_le_bytes());
        s.extend_from_slice(&0x10u64.to_le_bytes());
        s.extend_from_slice(&0x20u64.to_le_bytes());
        v.extend_from_slice(&REC_SAMPLE.to_le_bytes());
        v.extend_from_slice(&(s.len() as u32).to_le_bytes());
        v.extend_from_slice(&s);
        let clean_len = v.len();
        v.extend_from_slice(&REC_END.to_le_bytes());
        v.extend_from_slice(&100u32.to_le_bytes());
        v.extend_from_slice(&[0, 0]);
        let st = Stream::parse(Path::new("x"), &v).unwrap();
        assert_eq!(st.header.period, 7);
        assert_eq!(st.header.root_pid, 42);
        let mut ev = st.events();
        match ev.next() {
            Some(Event::Sample(s)) => {
                assert_eq!((s.pid, s.tid, s.ip, s.period), (42, 43, 0x20, 7));
                assert_eq!(s.branches().collect::<Vec<_>>(), vec![(0x10, 0x20)]);
            }
            other => panic!("{other:?}"),
        }
        assert!(ev.next().is_none());
        assert_eq!(ev.tail(), Tail::Truncated { offset: clean_len });
    }

    #[test]
    fn rejects_garbage() {
        assert!(Stream::parse(Path::new("x"), b"").is_err());
        assert!(Stream::parse(
            Path::new("x"),
            b"ELF\x7f............................................"
        )
        .is_err());
    }
}
