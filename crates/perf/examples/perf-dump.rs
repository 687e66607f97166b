//! Prints a perf.data's attrs, features and records, one line each: a debugging aid.
//!
//! `cargo run -p kfdo-perf --example perf-dump -- perf.data`

use kfdo_perf::{FeatureId, PerfData, Record};

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: perf-dump PERF.DATA");
        std::process::exit(2);
    };
    let pd = match PerfData::open(path.as_ref()) {
        Ok(pd) => pd,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("mode {:?}, data {} bytes", pd.mode(), pd.data_len());
    for (i, a) in pd.attrs().iter().enumerate() {
        println!("attr {i}: {a:?}");
    }
    for f in pd.features() {
        println!(
            "feature {} ({} bytes)",
            f.name(),
            pd.feature(f).map_or(0, <[u8]>::len)
        );
    }
    for (k, v) in [
        ("hostname", pd.hostname()),
        ("osrelease", pd.os_release()),
        ("arch", pd.arch()),
        ("version", pd.perf_version()),
    ] {
        println!("{k}: {v:?}");
    }
    println!("cmdline: {:?}", pd.cmdline());
    println!("nrcpus: {:?}", pd.nr_cpus());
    let _ = FeatureId::BUILD_ID;
    for b in pd.build_ids() {
        println!(
            "build-id {} {} pid {} misc {:#x}",
            b.build_id_hex(),
            b.filename,
            b.pid,
            b.misc
        );
    }
    let mut it = pd.records();
    while let Some(r) = it.next_with_offset() {
        match r {
            Ok((off, Record::Sample(s))) => println!(
                "{off:#x} SAMPLE attr {} {}/{} time {} ip {:#x} cpu {} period {} callchain {:?} brstack {:?}",
                s.attr, s.pid, s.tid, s.time, s.ip, s.cpu, s.period, s.callchain, s.branch_stack
            ),
            Ok((off, r)) => println!("{off:#x} {r:?}"),
            Err(e) => {
                println!("error: {e}");
                std::process::exit(1);
            }
        }
    }
}
