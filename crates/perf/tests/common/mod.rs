//! Helpers for tests that run this machine's `perf`: recording small files at test time and
//! reading what `perf script` says about them, to compare with what kfdo-perf reads.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kfdo_perf::{consts, Mode, PerfData, Record};

/// The events to record with, or `None` when perf is absent or not permitted (kfdo-testkit
/// decides: skipped on a developer's machine, a failure in CI).
pub fn perf_events() -> Option<(&'static str, &'static str)> {
    if !kfdo_testkit::require_tools(&["perf"]) {
        return None;
    }
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0\n"))
        .unwrap_or(false);
    if root || paranoid <= 1 {
        Some(("cpu-clock", "cpu-clock,task-clock"))
    } else if paranoid == 2 {
        // Unprivileged users may still sample their own user space.
        Some(("cpu-clock:u", "cpu-clock:u,task-clock:u"))
    } else {
        kfdo_testkit::require(
            false,
            &format!("kernel.perf_event_paranoid is {paranoid} and this is not root"),
            "run `sysctl kernel.perf_event_paranoid=1`",
        );
        None
    }
}

/// A shell loop that burns ~0.1-0.2 s of CPU in user space.
pub const WORKLOAD: &[&str] = &[
    "sh",
    "-c",
    "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done",
];

/// Runs `perf record ARGS -- WORKLOAD` writing `dir/name` (through a pipe when `pipe`).
pub fn record(dir: &Path, name: &str, args: &[&str], pipe: bool) -> PathBuf {
    let out = dir.join(name);
    let mut cmd = Command::new("perf");
    cmd.arg("record").args(args).arg("-c").arg("100000");
    if pipe {
        cmd.args(["-o", "-"])
            .stdout(std::fs::File::create(&out).unwrap());
    } else {
        cmd.arg("-o").arg(&out).stdout(Stdio::null());
    }
    let o = cmd
        .arg("--")
        .args(WORKLOAD)
        .stderr(Stdio::piped())
        .output()
        .expect("running perf record");
    assert!(
        o.status.success(),
        "perf record {args:?} failed (is perf_event_open allowed here? check kernel.perf_event_paranoid): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

pub fn perf_script(file: &Path, args: &[&str]) -> String {
    let o = Command::new("perf")
        .arg("script")
        .arg("-i")
        .arg(file)
        .args(args)
        .output()
        .expect("running perf script");
    assert!(
        o.status.success(),
        "perf script {args:?} on {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What we compare of a sample.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct S {
    pub time: u64,
    pub pid: u32,
    pub tid: u32,
    pub ip: u64,
    pub period: Option<u64>,
    pub callchain: Vec<u64>,
    /// (from, to, cycles, mispred, predicted)
    pub branches: Vec<(u64, u64, u16, bool, bool)>,
    pub event: Option<String>,
}

/// One record as `perf script -D` (raw dump) shows it: file offset, type name, and the
/// decoded sample fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct D {
    pub offset: u64,
    pub name: String,
    pub sample: Option<S>,
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("not hex: {s:?}"))
}

/// Parses `perf script -D`: lines `[TIME ]0xOFF [0xSIZE]: PERF_RECORD_NAME...`, and for
/// samples the `FP chain` and `branch stack` lines after them.
pub fn perf_dump(file: &Path) -> Vec<D> {
    let text = perf_script(file, &["-D"]);
    let mut out: Vec<D> = Vec::new();
    let mut section = "";
    for line in text.lines() {
        // `[CPU ][TIME ]0xOFFSET [0xSIZE]: PERF_RECORD_NAME...`
        if let Some(at) = line
            .find("]: PERF_RECORD_")
            .filter(|_| !line.starts_with('.'))
        {
            let head: Vec<&str> = line[..at].split_whitespace().collect();
            let r = &line[at + "]: PERF_RECORD_".len()..];
            let offset = hex(head[head.len() - 2]);
            let name: String = r
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            let mut d = D {
                offset,
                name: name.clone(),
                sample: None,
            };
            if name == "SAMPLE" {
                // SAMPLE(IP, 0x2): PID/TID: 0xIP period: P addr: A
                let time: u64 = if head.len() >= 3 {
                    head[head.len() - 3].parse().unwrap_or(0)
                } else {
                    0
                };
                let f: Vec<&str> = r.split(": ").collect();
                let (pid, tid) = f[1].split_once('/').unwrap();
                // f[2] = "0xIP period", f[3] = "P addr", f[4] = "A"
                let w: Vec<&str> = f[2].split(' ').chain(f[3].split(' ')).collect();
                d.sample = Some(S {
                    time,
                    pid: pid.parse::<i64>().unwrap() as u32,
                    tid: tid.parse::<i64>().unwrap() as u32,
                    ip: hex(w[0]),
                    period: Some(w[2].parse().unwrap()),
                    callchain: vec![],
                    branches: vec![],
                    event: None,
                });
            }
            out.push(d);
            section = "";
            continue;
        }
        if line.starts_with("... FP chain") || line.starts_with("... chain") {
            section = "chain";
        } else if line.starts_with("... branch stack") {
            section = "branch";
        } else if let Some(e) = line.strip_prefix(".....") {
            let s = out
                .last_mut()
                .and_then(|d| d.sample.as_mut())
                .expect("entry outside a sample");
            let (_, v) = e.split_once(": ").unwrap();
            match section {
                "chain" => s.callchain.push(hex(v.trim())),
                "branch" => {
                    // FROM -> TO CYCLES cycles M P ...
                    let w: Vec<&str> = v.split_whitespace().collect();
                    let flags = v.split_once("cycles").unwrap().1;
                    s.branches.push((
                        hex(w[0]),
                        hex(w[2]),
                        w[3].parse().unwrap(),
                        flags.contains('M'),
                        flags.contains('P'),
                    ));
                }
                _ => {}
            }
        } else if !line.starts_with('.') {
            section = "";
        }
    }
    out
}

/// The same view of a file through kfdo-perf.
pub fn our_dump(pd: &PerfData) -> Vec<D> {
    let mut out = Vec::new();
    let mut it = pd.records();
    while let Some(r) = it.next_with_offset() {
        let (offset, r) = r.unwrap_or_else(|e| panic!("reading {}: {e}", pd.path().display()));
        let name = match &r {
            Record::Sample(_) => "SAMPLE",
            Record::Mmap(m) => {
                if m.is_mmap2 {
                    "MMAP2"
                } else {
                    "MMAP"
                }
            }
            Record::Comm(_) => "COMM",
            Record::Fork(_) => "FORK",
            Record::Exit(_) => "EXIT",
            Record::Lost { .. } => "LOST",
            Record::BuildId(_) => "BUILD_ID",
            Record::Other { kind, .. } => consts::record::name(*kind),
        };
        let sample = match &r {
            Record::Sample(s) => Some(S {
                time: s.time,
                pid: s.pid,
                tid: s.tid,
                ip: s.ip,
                period: Some(s.period),
                callchain: s.callchain.to_vec(),
                branches: s
                    .branch_stack
                    .iter()
                    .map(|b| (b.from, b.to, b.cycles(), b.mispred(), b.predicted()))
                    .collect(),
                event: None,
            }),
            _ => None,
        };
        out.push(D {
            offset,
            name: name.to_string(),
            sample,
        });
    }
    out
}

/// Parses `perf script -F pid,tid,time,[event,]ip[,brstack] --ns` (one line per sample).
pub fn perf_script_samples(file: &Path, with_event: bool, with_brstack: bool) -> Vec<S> {
    let mut fields = String::from("pid,tid,time,");
    if with_event {
        fields.push_str("event,");
    }
    fields.push_str("ip");
    if with_brstack {
        fields.push_str(",brstack");
    }
    let text = perf_script(file, &["-F", &fields, "--ns", "--hide-call-graph"]);
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut w = line.split_whitespace();
        let (pid, tid) = w.next().unwrap().split_once('/').unwrap();
        let t = w.next().unwrap().trim_end_matches(':');
        let (secs, ns) = t.split_once('.').unwrap();
        let time = secs.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
        let event = with_event.then(|| w.next().unwrap().trim_end_matches(':').to_string());
        let ip = hex(w.next().unwrap());
        let branches = w
            .map(|b| {
                let f: Vec<&str> = b.split('/').collect();
                (
                    hex(f[0]),
                    hex(f[1]),
                    f[5].parse().unwrap(),
                    f[2] == "M",
                    f[2] == "P",
                )
            })
            .collect();
        out.push(S {
            time,
            pid: pid.parse().unwrap(),
            tid: tid.parse().unwrap(),
            ip,
            period: None,
            callchain: vec![],
            branches,
            event,
        });
    }
    out
}

/// Our samples in the shape of `perf_script_samples`.
pub fn our_samples(pd: &PerfData, with_event: bool) -> Vec<S> {
    let mut out = Vec::new();
    for r in pd.records() {
        if let Record::Sample(s) = r.unwrap() {
            out.push(S {
                time: s.time,
                pid: s.pid,
                tid: s.tid,
                ip: s.ip,
                period: None,
                callchain: vec![],
                branches: s
                    .branch_stack
                    .iter()
                    .map(|b| (b.from, b.to, b.cycles(), b.mispred(), b.predicted()))
                    .collect(),
                event: with_event.then(|| pd.attrs()[s.attr].name.clone().unwrap_or_default()),
            });
        }
    }
    out
}

/// Reads `path` and checks it against `perf script -D` (every record's offset and type,
/// every sample's fields), `perf script -F pid,tid,time,[event,]ip[,brstack]` (the samples,
/// time-ordered) and `record_chunks` (same records, same order).
pub fn check(path: &Path, with_brstack: bool, nattrs: usize, with_event: bool) -> PerfData {
    let pd = PerfData::open(path).unwrap();
    assert_eq!(pd.attrs().len(), nattrs);
    // Record by record, at the same offsets, with the same decoded sample fields.
    let mut theirs = perf_dump(path);
    if pd.mode() == Mode::Pipe {
        // In pipe mode perf counts offsets from the end of the 16-byte pipe header.
        theirs.iter_mut().for_each(|d| d.offset += 16);
    }
    let ours = our_dump(&pd);
    let samples = ours.iter().filter(|d| d.sample.is_some()).count();
    assert!(
        samples > 10,
        "{}: only {samples} samples recorded",
        path.display()
    );
    // perf -D lists every record it reads; compare on the offsets it lists (in pipe mode it
    // consumes a few header records without dumping them).
    let ours_at: std::collections::BTreeMap<u64, &D> = ours.iter().map(|d| (d.offset, d)).collect();
    assert!(
        theirs.len() + 4 >= ours.len(),
        "perf -D lists {} records, we read {}",
        theirs.len(),
        ours.len()
    );
    for t in &theirs {
        let o = ours_at.get(&t.offset).unwrap_or_else(|| {
            panic!("perf has a {} record at {:#x}; we do not", t.name, t.offset)
        });
        if t.name == "LOST_SAMPLES" {
            assert_eq!(o.name, "LOST");
        } else {
            assert_eq!(o.name, t.name, "record at {:#x}", t.offset);
        }
        assert_eq!(o.sample, t.sample, "sample at {:#x}", t.offset);
    }
    assert_eq!(
        theirs.iter().filter(|d| d.sample.is_some()).count(),
        samples
    );

    // The samples perf script prints (time-ordered) are ours, sorted by time.
    let mut mine = our_samples(&pd, with_event);
    let mut script = perf_script_samples(path, with_event, with_brstack);
    mine.sort();
    script.sort();
    assert_eq!(mine.len(), script.len());
    assert_eq!(mine, script);

    // Chunks for parallel readers cover the same records in the same order.
    for n in [1, 2, 3, 8, 1000] {
        let chunked: Vec<u64> = pd
            .record_chunks(n)
            .into_iter()
            .flat_map(|mut c| {
                std::iter::from_fn(move || c.next_with_offset()).map(|r| r.unwrap().0)
            })
            .collect();
        assert_eq!(
            chunked,
            ours.iter().map(|d| d.offset).collect::<Vec<_>>(),
            "chunks n={n}"
        );
    }
    pd
}
