//! Any bytes: open, read every accessor, iterate all records (whole and chunked); never panic.
#![no_main]

use kfdo_perf::{FeatureId, PerfData, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(pd) = PerfData::from_bytes("fuzz", data.to_vec()) else { return };
    let _ = (pd.hostname(), pd.cmdline(), pd.nr_cpus(), pd.arch(), pd.build_ids().len(), pd.data_len());
    for f in 0..40 {
        let _ = pd.feature(FeatureId(f));
    }
    let mut n = 0usize;
    for r in pd.records() {
        match r {
            Ok(Record::Sample(s)) => {
                n += s.callchain.iter().count() + s.branch_stack.iter().count() + s.read.iter().count();
                n += s.branch_stack.counters().len() + s.regs_user.values.len() + s.stack_user.len();
                let _ = (s.branch_stack.get(s.branch_stack.len()), s.cpumode());
            }
            Ok(Record::Mmap(m)) => n += m.filename.len() + usize::from(m.is_executable()),
            Ok(_) => n += 1,
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                break;
            }
        }
    }
    for c in pd.record_chunks(3) {
        for r in c {
            if r.is_err() {
                break;
            }
        }
    }
    std::hint::black_box(n);
});
