//! Any text: read every `perf script` item, whole and chunked; never panic.
#![no_main]

use kfdo_perf::{ScriptFile, ScriptItem};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let f = ScriptFile::from_bytes("fuzz", data.to_vec());
    for mut r in std::iter::once(f.items()).chain(f.script_chunks(3)) {
        while let Some(item) = r.next_item() {
            match item {
                Ok(ScriptItem::Sample { branches, .. }) => {
                    std::hint::black_box(branches.len());
                }
                Ok(ScriptItem::Mmap(m)) => {
                    std::hint::black_box(m.filename.len());
                }
                Err(e) => {
                    std::hint::black_box(e.to_string());
                }
            }
        }
    }
});
