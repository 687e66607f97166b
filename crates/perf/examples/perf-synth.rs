//! Writes a synthetic perf.data with branch stacks: a throughput-benchmark input and a
//! smoke test of the writer against `perf script`.
//!
//! `perf-synth OUT NSAMPLES [--hw-idx] [--pipe] [--entries N]`

use kfdo_perf::consts::{branch, sample};
use kfdo_perf::{
    BranchEntry, BuildIdEntry, EventAttr, FeatureId, Fork, OwnedMmap, PerfWriter, PipeWriter,
    SampleOut,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: perf-synth OUT NSAMPLES [--hw-idx] [--pipe] [--entries N]");
        std::process::exit(2);
    }
    let out = std::path::Path::new(&args[1]);
    let n: u64 = args[2].parse()?;
    let hw_idx = args.iter().any(|a| a == "--hw-idx");
    let pipe = args.iter().any(|a| a == "--pipe");
    let entries: usize = args
        .iter()
        .position(|a| a == "--entries")
        .and_then(|i| args.get(i + 1))
        .map_or(Ok(32), |s| s.parse())?;

    let mut attr = EventAttr::new(kfdo_perf::consts::perf_type::HARDWARE, 0, 100_003);
    attr.sample_type =
        sample::IP | sample::TID | sample::TIME | sample::PERIOD | sample::BRANCH_STACK;
    attr.branch_sample_type =
        branch::USER | branch::ANY | if hw_idx { branch::HW_INDEX } else { 0 };
    attr.exclude_kernel = true;
    attr.name = Some("cycles".into());

    let (pid, base) = (4242u32, 0x400000u64);
    let mmap = OwnedMmap {
        pid,
        tid: pid,
        start: base,
        len: 0x100000,
        pgoff: 0,
        filename: "/usr/bin/synthetic".into(),
        misc: kfdo_perf::consts::misc::USER,
        is_mmap2: true,
        time: 1,
        ..Default::default()
    };
    let mut stack = vec![BranchEntry::default(); entries];
    macro_rules! body {
        ($w:expr) => {{
            let w = &mut $w;
            w.set_feature_string(FeatureId::HOSTNAME, "synthetic");
            w.set_feature_string(FeatureId::ARCH, "x86_64");
            w.add_build_id(BuildIdEntry {
                pid: -1,
                misc: kfdo_perf::consts::misc::USER,
                build_id: vec![0xab; 20],
                filename: "/usr/bin/synthetic".into(),
            });
            w.write_comm(pid, pid, "synthetic", true)?;
            w.write_mmap2(&mmap)?;
            for i in 0..n {
                for (k, e) in stack.iter_mut().enumerate() {
                    let from = base + 0x1000 + ((i * 131 + k as u64 * 17) % 0xf000);
                    *e = BranchEntry {
                        from,
                        to: from + 0x40,
                        flags: BranchEntry::make_flags(
                            k % 7 == 0,
                            k % 7 != 0,
                            false,
                            false,
                            (k * 3) as u16,
                            0,
                        ),
                    };
                }
                let s = SampleOut {
                    ip: base + 0x1000 + i % 0xf000,
                    pid,
                    tid: pid,
                    time: 10 + i,
                    period: 100_003,
                    branches: &stack,
                    hw_idx: hw_idx.then_some(i % 32),
                    ..Default::default()
                };
                w.write_sample(0, &s)?;
            }
            w.write_exit(&Fork {
                pid,
                ppid: 1,
                tid: pid,
                ptid: 1,
                time: 10 + n,
            })?;
        }};
    }
    if pipe {
        let mut w = PipeWriter::new(
            std::io::BufWriter::new(std::fs::File::create(out)?),
            vec![attr],
        )?;
        body!(w);
        w.finish()?;
    } else {
        let mut w = PerfWriter::create(out, vec![attr])?;
        body!(w);
        w.finish()?;
    }
    Ok(())
}
