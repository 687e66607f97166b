//! The functions BOLT sees, on a program clang-19 and lld build at test time: the PLT
//! entries by the symbol their GOT slot resolves to, the lazy-binding PLT header as
//! BOLT's pseudo function (a first call's samples land there), and local names numbered.

use std::process::Command;

use kfdo_elf::Binary;
use kfdo_layout::bolt::FunctionTable;
use kfdo_testkit::require_tools;

const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3; /* glibc inlines atoi as strtol */
    printf("%d\n", twice(n));
    return 0;
}
"#;

#[test]
fn plt_entries_header_and_local_names() {
    if !require_tools(&["clang-19", "ld.lld-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(&src, SOURCE).unwrap();
    let bin = dir.path().join("p");
    let out = Command::new("clang-19")
        .args([
            "-O2",
            "-fno-pie",
            "-no-pie",
            "-fuse-ld=lld",
            "-Wl,-z,lazy",
            "-o",
        ])
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
    let table = FunctionTable::new(&b).unwrap();
    let names: Vec<&str> = table.iter().map(|f| f.name.as_str()).collect();
    for want in [
        "main",
        "twice/1",
        "strtol@PLT",
        "printf@PLT",
        "__BOLT_PSEUDO_.plt",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let plt = b.section_by_name(".plt").unwrap();
    let header = table.containing(plt.addr).unwrap();
    assert_eq!(header.name, "__BOLT_PSEUDO_.plt");
    let entry = table.containing(plt.addr + 16).unwrap();
    assert!(entry.plt && entry.name.ends_with("@PLT"), "{entry:?}");
}
