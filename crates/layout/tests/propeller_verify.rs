//! The check that a BB address map still describes the code (`propeller::verify`), on a
//! program clang-19 builds at test time: every block of its own map fits, and a map
//! whose block boundaries moved by a byte, or whose blocks swapped sizes, does not.

use std::process::Command;

use kfdo_elf::{BbAddrMap, Binary};
use kfdo_layout::propeller::verify::misplaced_block;
use kfdo_testkit::require_tools;

const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static long collatz(long n) {
    long steps = 0;
    while (n != 1) {
        n = (n & 1) ? 3 * n + 1 : n / 2;
        steps++;
    }
    return steps;
}
int main(int argc, char **argv) {
    long best = 0, total = 0, limit = argc > 1 ? atol(argv[1]) : 1000;
    for (long i = 1; i < limit; i++) {
        long s = collatz(i);
        if (s > best) best = s;
        total += s;
    }
    printf("%ld %ld\n", best, total);
    return 0;
}
"#;

#[test]
fn own_map_fits_and_moved_blocks_do_not() {
    if !require_tools(&["clang-19", "ld.lld-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("c.c");
    std::fs::write(&src, SOURCE).unwrap();
    let bin = dir.path().join("c");
    let out = Command::new("clang-19")
        .args(["-O2", "-fbasic-block-address-map", "-fuse-ld=lld", "-o"])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = Binary::open(&bin).unwrap();
    let map = BbAddrMap::read(&b).unwrap();
    assert!(map.functions.len() >= 2);
    for f in &map.functions {
        assert_eq!(misplaced_block(&b, f), None, "{:#x}", f.address());
    }
    let names = BbAddrMap::function_names(&b);
    let mut collatz = map
        .functions
        .iter()
        .find(|f| names[&f.address()].starts_with("collatz"))
        .expect("collatz is mapped")
        .clone();
    assert!(collatz.ranges[0].blocks.len() >= 3, "collatz has a loop");
    // A boundary one byte late: the block before it ends inside an instruction (every
    // instruction of the loop is longer than a byte, or the next one starts there).
    let mut moved = collatz.clone();
    let at = moved.ranges[0].blocks[1].offset;
    moved.ranges[0].blocks[1].offset += 1;
    moved.ranges[0].blocks[1].size -= 1;
    moved.ranges[0].blocks[0].size += 1;
    let base = moved.address();
    let found = misplaced_block(&b, &moved);
    assert!(
        found.is_some(),
        "a block moved to {:#x} was not noticed",
        base + u64::from(at) + 1
    );
    // Sizes rotated among the blocks, as when blocks were reordered after the map
    // was written: the total is the same, the boundaries are not.
    let blocks = &mut collatz.ranges[0].blocks;
    let sizes: Vec<u32> = blocks.iter().map(|b| b.size).collect();
    let mut offset = 0;
    for (i, blk) in blocks.iter_mut().enumerate() {
        blk.offset = offset;
        blk.size = sizes[(i + 1) % sizes.len()];
        offset += blk.size;
    }
    assert_ne!(
        blocks.iter().map(|b| b.size).collect::<Vec<_>>(),
        sizes,
        "the blocks have different sizes"
    );
    assert!(misplaced_block(&b, &collatz).is_some());
}
