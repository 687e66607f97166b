//! Reading throughput: iterates every record of a perf.data (sequentially, then in
//! parallel chunks) and of a `perf script` text, summing branch entries, and prints MB/s
//! next to a reference measured in the same run: a plain pass summing the file's u64
//! words (what "memory bandwidth" means on this machine).
//!
//! `perf-throughput PERF.DATA [SCRIPT.TXT]`
//! (make a big input with `perf-synth big.data 2000000` and
//!  `perf script -i big.data -F ip,brstack > big.txt`)

use std::time::Instant;

use kfdo_perf::{PerfData, Record, ScriptFile, ScriptItem};

fn rate(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: perf-throughput PERF.DATA [SCRIPT.TXT]");
        std::process::exit(2);
    };
    let pd = PerfData::open(path.as_ref())?;
    let bytes = pd.as_bytes();
    let len = bytes.len() as u64;

    // Warm the page cache and measure the reference.
    let t = Instant::now();
    let sum = bytes.chunks_exact(8).fold(0u64, |a, c| {
        a.wrapping_add(u64::from_le_bytes(c.try_into().unwrap()))
    });
    let reference = rate(len, t.elapsed().as_secs_f64());
    std::hint::black_box(sum);

    let t = Instant::now();
    let (mut samples, mut branches) = (0u64, 0u64);
    for r in pd.records() {
        if let Record::Sample(s) = r? {
            samples += 1;
            // Touch every entry (as a consumer would), not just the count.
            branches += s
                .branch_stack
                .iter()
                .fold(0, |a, b| a + u64::from(b.from != b.to));
        }
    }
    let seq = rate(len, t.elapsed().as_secs_f64());

    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = Instant::now();
    let par: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = pd
            .record_chunks(threads)
            .into_iter()
            .map(|c| {
                s.spawn(move || {
                    c.filter_map(|r| match r {
                        Ok(Record::Sample(s)) => Some(s.branch_stack.len() as u64),
                        _ => None,
                    })
                    .sum::<u64>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let par_rate = rate(len, t.elapsed().as_secs_f64());
    std::hint::black_box(par);

    println!(
        "{path}: {:.1} MB, {samples} samples, {branches} branch entries",
        len as f64 / 1e6
    );
    println!("  reference (sum of u64 words)   {reference:8.0} MB/s");
    println!(
        "  records, 1 thread              {seq:8.0} MB/s  ({:.2}x reference)",
        seq / reference
    );
    println!(
        "  records, {threads} threads chunked    {par_rate:8.0} MB/s  ({:.2}x reference)",
        par_rate / reference
    );

    if let Some(text) = args.get(2) {
        let f = ScriptFile::open(text.as_ref())?;
        let t = Instant::now();
        let mut n = 0u64;
        let mut r = f.items();
        while let Some(item) = r.next_item() {
            if let ScriptItem::Sample { branches, .. } = item? {
                n += branches.len() as u64;
            }
        }
        let s1 = rate(f.len(), t.elapsed().as_secs_f64());
        let t = Instant::now();
        let np: u64 = std::thread::scope(|s| {
            let hs: Vec<_> = f
                .script_chunks(threads)
                .into_iter()
                .map(|mut c| {
                    s.spawn(move || {
                        let mut n = 0u64;
                        while let Some(Ok(item)) = c.next_item() {
                            if let ScriptItem::Sample { branches, .. } = item {
                                n += branches.len() as u64;
                            }
                        }
                        n
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        let sp = rate(f.len(), t.elapsed().as_secs_f64());
        assert_eq!(n, np);
        println!("{text}: {:.1} MB, {n} branch entries", f.len() as f64 / 1e6);
        println!("  perf script text, 1 thread     {s1:8.0} MB/s");
        println!("  perf script text, {threads} threads    {sp:8.0} MB/s");
    }
    Ok(())
}
