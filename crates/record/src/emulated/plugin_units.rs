//! The plugin's plain-logic modules, compiled into this library's tests so that `cargo
//! test` runs their unit tests (`#[cfg(test)] mod tests` in each file) on the very source
//! files the plugin is built from. The plugin itself is a `cdylib` that `build.rs` builds
//! with plain `rustc`, which cargo never tests; and the round trip below needs the
//! plugin's encoder and this library's reader in one test binary.
//!
//! The files name their siblings `super::x`, which resolves here as in the plugin crate.
//! Only modules with no QEMU or libc calls are included (the rest are covered by the
//! integration tests that record real programs).

// The library uses none of these outside the tests.
#![allow(dead_code)]

#[path = "../../../qemu-plugin/src/cache_model.rs"]
mod cache_model;
#[path = "../../../qemu-plugin/src/classify.rs"]
mod classify;
#[path = "../../../qemu-plugin/src/classify_a64.rs"]
mod classify_a64;
#[path = "../../../qemu-plugin/src/config.rs"]
mod config;
#[path = "../../../qemu-plugin/src/filter.rs"]
mod filter;
#[path = "../../../qemu-plugin/src/proc_maps.rs"]
mod proc_maps;
#[path = "../../../qemu-plugin/src/ring.rs"]
mod ring;
#[path = "../../../qemu-plugin/src/stream_encode.rs"]
mod stream_encode;
#[path = "../../../qemu-plugin/src/word.rs"]
mod word;

use super::stream_format;

/// The C header programs mark their windows with says the same bytes as the plugin.
#[test]
fn the_c_markers_are_the_plugins() {
    let h = include_str!("../../markers/kfdo_markers.h");
    // Each marker is defined once per architecture, x86-64 first.
    let bytes_of = |name: &str| -> Vec<Vec<u8>> {
        h.split("#define ")
            .filter(|d| d.starts_with(name))
            .map(|def| {
                let list = def
                    .split(".byte ")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                list.split(',')
                    .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).unwrap())
                    .collect()
            })
            .collect()
    };
    assert_eq!(
        bytes_of("KFDO_WINDOW_START"),
        [
            &stream_format::MARKER_START[..],
            &stream_format::MARKER_START_A64[..]
        ]
    );
    assert_eq!(
        bytes_of("KFDO_WINDOW_STOP"),
        [
            &stream_format::MARKER_STOP[..],
            &stream_format::MARKER_STOP_A64[..]
        ]
    );
}

/// A stream written with the plugin's encoder, read back with the library's reader.
mod round_trip {
    use super::ring::Ring;
    use super::stream_encode as enc;
    use super::stream_format::{Counts, Header, FILTER_USER, MAP_FROM_MAPS};
    use crate::emulated::stream::{Event, Stream, Tail};
    use std::path::Path;

    fn header() -> Header {
        Header {
            period: 3,
            depth: 4,
            system: false,
            filter: FILTER_USER,
            root_pid: 4242,
            start_ns: 1_000_000,
        }
    }

    #[test]
    fn every_record_reads_back() {
        let mut b = Vec::new();
        header().encode(&mut b);
        enc::thread(&mut b, 10, 4242, 4243);
        enc::info(&mut b, 0x7f00_0000_0000, 0x4000_1040);
        enc::mmap(
            &mut b,
            &enc::Mmap {
                time: 11,
                pid: 4242,
                tid: 4243,
                addr: 0x4000_0000,
                len: 0x2000,
                pgoff: 0x1000,
                prot: 5,
                flags: MAP_FROM_MAPS,
                maj: 0xfe,
                min: 1,
                ino: 99,
                path: b"/usr/bin/x y",
            },
        );
        // A sample taken by the plugin's ring: every 3rd branch, 4 deep.
        let mut ring = Ring::new(4, 3);
        for i in 1..=6u64 {
            if ring.push(0x1000 + i, 0x2000 + i) && i == 6 {
                enc::sample(
                    &mut b,
                    12,
                    4242,
                    4243,
                    0x2006,
                    ring.period(),
                    ring.newest_first(),
                );
            }
        }
        enc::fork(&mut b, 13, 4300, 4242, 4300, 4242);
        let mut counts = Counts::ZERO;
        counts.insns = [100, 7];
        counts.taken = [20, 1];
        counts.cond = [15, 0];
        counts.l1i_access = [30, 2];
        counts.l1i_miss = [3, 1];
        counts.itlb_access = [25, 2];
        counts.itlb_miss = [2, 2];
        enc::counters(&mut b, 4242, 3, &counts.by_side());
        enc::exec(&mut b, 14, 4242, 4243);
        enc::window(&mut b, 16, true);
        enc::window(&mut b, 17, false);
        enc::kernel_text(&mut b, 0xffff_ffff_8100_0040);
        enc::exit(&mut b, 15, 4242, 1, 4242, true);
        enc::end(&mut b, 4242);

        let st = Stream::parse(Path::new("capture"), &b).unwrap();
        assert_eq!(st.header, header());
        let mut ev = st.events();
        match ev.next() {
            Some(Event::Thread { time, pid, tid }) => {
                assert_eq!((time, pid, tid), (10, 4242, 4243))
            }
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Info {
                guest_base,
                first_pc,
            }) => assert_eq!((guest_base, first_pc), (0x7f00_0000_0000, 0x4000_1040)),
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Mmap(m)) => {
                assert_eq!((m.time, m.pid, m.tid), (11, 4242, 4243));
                assert_eq!((m.start, m.len, m.pgoff), (0x4000_0000, 0x2000, 0x1000));
                assert_eq!(
                    (m.prot, m.flags, m.maj, m.min, m.ino),
                    (5, MAP_FROM_MAPS, 0xfe, 1, 99)
                );
                assert_eq!(m.path, b"/usr/bin/x y");
            }
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Sample(s)) => {
                assert_eq!(
                    (s.time, s.pid, s.tid, s.ip, s.period, s.nr),
                    (12, 4242, 4243, 0x2006, 3, 4)
                );
                assert_eq!(
                    s.branches().collect::<Vec<_>>(),
                    [
                        (0x1006, 0x2006),
                        (0x1005, 0x2005),
                        (0x1004, 0x2004),
                        (0x1003, 0x2003)
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Fork {
                time,
                pid,
                ppid,
                tid,
                ptid,
            }) => assert_eq!((time, pid, ppid, tid, ptid), (13, 4300, 4242, 4300, 4242)),
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Counters {
                pid,
                threads,
                counts: c,
            }) => {
                assert_eq!((pid, threads), (4242, 3));
                assert_eq!(c, counts);
            }
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Exec { time, pid, tid }) => assert_eq!((time, pid, tid), (14, 4242, 4243)),
            other => panic!("{other:?}"),
        }
        for (at, opens) in [(16, true), (17, false)] {
            match ev.next() {
                Some(Event::Window { time, open }) => assert_eq!((time, open), (at, opens)),
                other => panic!("{other:?}"),
            }
        }
        match ev.next() {
            Some(Event::KernelText { lowest }) => assert_eq!(lowest, 0xffff_ffff_8100_0040),
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::Exit {
                time,
                pid,
                ppid,
                tid,
                write_failed,
            }) => assert_eq!(
                (time, pid, ppid, tid, write_failed),
                (15, 4242, 1, 4242, true)
            ),
            other => panic!("{other:?}"),
        }
        match ev.next() {
            Some(Event::End { pid }) => assert_eq!(pid, 4242),
            other => panic!("{other:?}"),
        }
        assert!(ev.next().is_none());
        assert_eq!(ev.tail(), Tail::Clean);
    }

    #[test]
    fn system_header_and_cut_record() {
        let h = Header {
            system: true,
            root_pid: -1,
            ..header()
        };
        let mut b = Vec::new();
        h.encode(&mut b);
        enc::sample(
            &mut b,
            1,
            -1,
            -1,
            0xffff_ffff_8100_0000,
            3,
            std::iter::empty(),
        );
        let whole = b.len();
        enc::end(&mut b, -1);
        b.truncate(b.len() - 1);
        let st = Stream::parse(Path::new("capture"), &b).unwrap();
        assert_eq!(st.header, h);
        let mut ev = st.events();
        match ev.next() {
            Some(Event::Sample(s)) => {
                assert_eq!((s.pid, s.tid, s.nr), (-1, -1, 0));
                assert_eq!(s.ip, 0xffff_ffff_8100_0000);
            }
            other => panic!("{other:?}"),
        }
        assert!(ev.next().is_none());
        assert_eq!(ev.tail(), Tail::Truncated { offset: whole });
    }
}
