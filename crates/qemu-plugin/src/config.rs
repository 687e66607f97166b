//! The plugin's arguments (`-plugin lib.so,key=value,...`), read once at install.

use super::stream_format::{FILTER_ALL, FILTER_KERNEL, FILTER_USER};
use std::sync::OnceLock;

/// The guest's architecture: which instruction set `translate.rs` classifies and which
/// system-call numbers `syscalls.rs` watches. It comes from QEMU (`qemu_info_t`'s target
/// name, `qemu-x86_64` or `qemu-aarch64`), never from an argument that could disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guest {
    X86_64,
    Aarch64,
}

impl Guest {
    /// The guest of a QEMU target name (`TARGET_NAME`: `x86_64`, `aarch64`).
    pub fn from_target_name(name: &[u8]) -> Option<Guest> {
        match name {
            b"x86_64" => Some(Guest::X86_64),
            b"aarch64" => Some(Guest::Aarch64),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub guest: Guest,
    pub period: u64,
    pub depth: usize,
    pub counters: bool,
    pub system: bool,
    /// Record only between the guest's window markers (`window=markers`).
    pub window: bool,
    /// `FILTER_ALL`, `FILTER_USER` or `FILTER_KERNEL` (by source and target address).
    pub filter: u8,
    pub exe: Vec<u8>,
    pub l1i_size: u64,
    pub l1i_ways: usize,
    pub l1i_line: u64,
    pub itlb_entries: usize,
    /// The page size of user code (and of kernel code outside the kernel image).
    pub itlb_page: u64,
    /// The page size of the kernel image's text, which x86-64 and arm64 kernels map
    /// with large pages.
    pub itlb_kernel_page: u64,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

/// The configuration (set at install, before any callback is registered).
pub fn cfg() -> &'static Config {
    CONFIG.get().expect("vlbr: not configured")
}

pub fn set(c: Config) {
    let _ = CONFIG.set(c);
}

fn parse_u64(v: &str) -> Option<u64> {
    if let Some(h) = v.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        v.parse().ok()
    }
}

impl Config {
    /// The configuration the arguments give, and the output path (`out=`); or the message
    /// to print.
    pub fn parse(system: bool, target: &[u8], args: &[&[u8]]) -> Result<(Config, Vec<u8>), String> {
        let Some(guest) = Guest::from_target_name(target) else {
            return Err(format!(
                "vlbr: QEMU's target {} is not supported (x86_64 and aarch64 are)\n",
                String::from_utf8_lossy(target)
            ));
        };
        let mut c = Config {
            guest,
            period: 10007,
            depth: 32,
            counters: false,
            system,
            window: false,
            filter: if system { FILTER_ALL } else { FILTER_USER } as u8,
            exe: Vec::new(),
            l1i_size: 32 * 1024,
            l1i_ways: 8,
            l1i_line: 64,
            itlb_entries: 64,
            itlb_page: 4096,
            itlb_kernel_page: 2 << 20,
        };
        let mut out: Option<Vec<u8>> = None;
        for &a in args {
            let (k, v) = match a.iter().position(|&c| c == b'=') {
                Some(p) => (&a[..p], &a[p + 1..]),
                None => (a, &b""[..]),
            };
            let vs = String::from_utf8_lossy(v).to_string();
            let bad = |what: &str| format!("vlbr: bad argument {what}={vs}\n");
            match k {
                b"out" => out = Some(v.to_vec()),
                b"exe" => c.exe = v.to_vec(),
                b"period" => match parse_u64(&vs) {
                    Some(p) if p > 0 => c.period = p,
                    _ => return Err(bad("period")),
                },
                b"depth" => match parse_u64(&vs) {
                    Some(d) if d > 0 && d <= 1024 => c.depth = d as usize,
                    _ => return Err(bad("depth")),
                },
                b"counters" => c.counters = vs == "1" || vs == "on" || vs == "true",
                b"window" => {
                    c.window = match vs.as_str() {
                        "whole" => false,
                        "markers" => true,
                        _ => return Err(bad("window")),
                    }
                }
                b"filter" => {
                    c.filter = match vs.as_str() {
                        "all" => FILTER_ALL,
                        "user" => FILTER_USER,
                        "kernel" => FILTER_KERNEL,
                        _ => return Err(bad("filter")),
                    } as u8
                }
                b"l1i" => {
                    // size:ways:line
                    let p: Vec<Option<u64>> = vs.split(':').map(parse_u64).collect();
                    match p.as_slice() {
                        [Some(s), Some(w), Some(l)]
                            if *s > 0 && *w > 0 && l.is_power_of_two() && *w <= 64 =>
                        {
                            c.l1i_size = *s;
                            c.l1i_ways = *w as usize;
                            c.l1i_line = *l;
                        }
                        _ => return Err(bad("l1i")),
                    }
                }
                b"itlb" => {
                    // entries:page:kernel text page
                    let p: Vec<Option<u64>> = vs.split(':').map(parse_u64).collect();
                    match p.as_slice() {
                        [Some(e), Some(pg), Some(kpg)]
                            if *e > 0
                                && *e <= 4096
                                && pg.is_power_of_two()
                                && kpg.is_power_of_two() =>
                        {
                            c.itlb_entries = *e as usize;
                            c.itlb_page = *pg;
                            c.itlb_kernel_page = *kpg;
                        }
                        _ => return Err(bad("itlb")),
                    }
                }
                _ => {
                    return Err(format!(
                        "vlbr: unknown argument {}\n",
                        String::from_utf8_lossy(a)
                    ))
                }
            }
        }
        match out {
            Some(o) => Ok((c, o)),
            None => Err("vlbr: missing out=PATH\n".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(system: bool, args: &[&str]) -> Result<(Config, Vec<u8>), String> {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        Config::parse(system, b"x86_64", &a)
    }

    #[test]
    fn the_guest_is_qemus_target() {
        let a: &[&[u8]] = &[b"out=o"];
        let guest = |t: &[u8]| Config::parse(false, t, a).map(|(c, _)| c.guest);
        assert_eq!(guest(b"x86_64"), Ok(Guest::X86_64));
        assert_eq!(guest(b"aarch64"), Ok(Guest::Aarch64));
        assert_eq!(
            guest(b"riscv64"),
            Err("vlbr: QEMU's target riscv64 is not supported (x86_64 and aarch64 are)\n".into())
        );
    }

    #[test]
    fn defaults() {
        let (c, out) = parse(false, &["out=/tmp/x,y"]).unwrap();
        assert_eq!(out, b"/tmp/x,y");
        assert_eq!((c.period, c.depth, c.counters), (10007, 32, false));
        assert!(!c.window);
        assert_eq!(c.filter as u32, FILTER_USER);
        assert_eq!((c.l1i_size, c.l1i_ways, c.l1i_line), (32768, 8, 64));
        assert_eq!(
            (c.itlb_entries, c.itlb_page, c.itlb_kernel_page),
            (64, 4096, 2 << 20)
        );
        let (c, _) = parse(true, &["out=o"]).unwrap();
        assert_eq!(c.filter as u32, FILTER_ALL);
        assert!(c.system);
    }

    #[test]
    fn values() {
        let (c, _) = parse(
            false,
            &[
                "out=o",
                "period=0x3f1",
                "depth=1024",
                "counters=on",
                "filter=kernel",
                "exe=/bin/true",
                "l1i=65536:4:128",
                "itlb=128:0x2000:0x40000000",
                "window=markers",
            ],
        )
        .unwrap();
        assert_eq!((c.period, c.depth, c.counters), (1009, 1024, true));
        assert_eq!(c.filter as u32, FILTER_KERNEL);
        assert_eq!(c.exe, b"/bin/true");
        assert!(c.window);
        assert_eq!((c.l1i_size, c.l1i_ways, c.l1i_line), (65536, 4, 128));
        assert_eq!(
            (c.itlb_entries, c.itlb_page, c.itlb_kernel_page),
            (128, 0x2000, 0x4000_0000)
        );
        for on in ["1", "on", "true"] {
            assert!(
                parse(false, &["out=o", &format!("counters={on}")])
                    .unwrap()
                    .0
                    .counters
            );
        }
        assert!(!parse(false, &["out=o", "counters=yes"]).unwrap().0.counters);
    }

    #[test]
    fn errors() {
        let err = |a: &[&str]| parse(false, a).unwrap_err();
        assert_eq!(err(&["period=1"]), "vlbr: missing out=PATH\n");
        assert_eq!(err(&["out=o", "period=0"]), "vlbr: bad argument period=0\n");
        assert_eq!(
            err(&["out=o", "depth=1025"]),
            "vlbr: bad argument depth=1025\n"
        );
        assert_eq!(
            err(&["out=o", "filter=both"]),
            "vlbr: bad argument filter=both\n"
        );
        assert_eq!(
            err(&["out=o", "l1i=32768:8:65"]),
            "vlbr: bad argument l1i=32768:8:65\n"
        );
        assert_eq!(
            err(&["out=o", "l1i=32768:65:64"]),
            "vlbr: bad argument l1i=32768:65:64\n"
        );
        assert_eq!(
            err(&["out=o", "itlb=4097:4096:2097152"]),
            "vlbr: bad argument itlb=4097:4096:2097152\n"
        );
        assert_eq!(err(&["out=o", "itlb=64"]), "vlbr: bad argument itlb=64\n");
        // The kernel text's page size is part of the model: two sizes are not enough.
        assert_eq!(
            err(&["out=o", "itlb=64:4096"]),
            "vlbr: bad argument itlb=64:4096\n"
        );
        assert_eq!(
            err(&["out=o", "itlb=64:4096:3000"]),
            "vlbr: bad argument itlb=64:4096:3000\n"
        );
        assert_eq!(
            err(&["out=o", "window=boot"]),
            "vlbr: bad argument window=boot\n"
        );
        assert_eq!(
            err(&["out=o", "speed=9"]),
            "vlbr: unknown argument speed=9\n"
        );
    }
}
