//! Speed of the writers and readers on a 50k-function profile. Prints the
//! numbers (run with `--release --nocapture` to see them); not a timed test,
//! except a very generous bound in release builds that only a gross
//! regression (e.g. quadratic behaviour) would exceed.

#[path = "format_gen.rs"]
mod gen;

use std::time::{Duration, Instant};

use gen::*;
use kfdo_afdo::{parse_profile, text, Format, ProfileSummary};

fn time<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

#[test]
fn fifty_thousand_functions() {
    let p = random_profile(2024, 50_000);
    let records: usize = p
        .functions
        .values()
        .map(|f| {
            let mut n = 0;
            f.visit(&mut |g, _| n += g.body.len());
            n
        })
        .sum();
    let (t, wt) = time(|| {
        let mut v = Vec::new();
        kfdo_afdo::write_profile(&p, Format::Text, &mut v).unwrap();
        v
    });
    let (e, we) = time(|| {
        let mut v = Vec::new();
        kfdo_afdo::write_profile(&p, Format::ExtBinary, &mut v).unwrap();
        v
    });
    let (pt, rt) = time(|| text::parse_text(&t, "speed.txt").unwrap());
    let (pe, re) = time(|| parse_profile(&e, "speed.extbinary").unwrap());
    let (_, st) = time(|| ProfileSummary::compute(&p));
    assert_eq!(pt, p);
    assert_eq!(pe, p);
    eprintln!(
        "50k functions, {records} body records; text {} KiB, extbinary {} KiB\n\
         write text {wt:?}, write extbinary {we:?} (summary alone {st:?}), \
         read text {rt:?}, read extbinary {re:?}",
        t.len() / 1024,
        e.len() / 1024
    );
    if !cfg!(debug_assertions) {
        let bound = Duration::from_secs(5);
        for (what, d) in [
            ("write text", wt),
            ("write extbinary", we),
            ("read text", rt),
            ("read extbinary", re),
        ] {
            assert!(d < bound, "{what} took {d:?}");
        }
    }
}
