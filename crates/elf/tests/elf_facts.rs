//! build-id, is_pie, PT_LOAD segments, preferred base and the address <->
//! file offset mapping against `llvm-readelf-19 -n -l` on a PIE, a non-PIE
//! executable and a shared library.

mod common;

use common::*;
use kfdo_elf::Binary;

struct Readelf {
    elf_type: String,
    build_id: Option<String>,
    /// (offset, vaddr, filesz, memsz, flags)
    loads: Vec<(u64, u64, u64, u64, String)>,
}

fn readelf(path: &std::path::Path) -> Readelf {
    let text = run(
        "llvm-readelf-19",
        &["-n", "-l", "--wide", path.to_str().unwrap()],
    );
    let mut r = Readelf {
        elf_type: String::new(),
        build_id: None,
        loads: Vec::new(),
    };
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Elf file type is ") {
            r.elf_type = rest.split_whitespace().next().unwrap().to_string();
        } else if let Some(rest) = t.strip_prefix("Build ID: ") {
            r.build_id = Some(rest.trim().to_string());
        } else if t.starts_with("LOAD ") {
            let f: Vec<&str> = t.split_whitespace().collect();
            // LOAD Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align
            let flags = f[6..f.len() - 1].join("");
            r.loads
                .push((hex(f[1]), hex(f[2]), hex(f[4]), hex(f[5]), flags));
        }
    }
    r
}

fn check(path: &std::path::Path, expect_pie: bool, expect_type: &str) {
    let bin = Binary::open(path).unwrap();
    let re = readelf(path);
    assert_eq!(re.elf_type, expect_type);
    assert_eq!(bin.is_pie(), expect_pie);
    assert!(!bin.is_kernel());
    let ours_id = bin
        .build_id()
        .map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());
    assert_eq!(ours_id, re.build_id, "build-id");
    assert!(
        ours_id.is_some(),
        "test binaries are linked with --build-id"
    );

    let segs = bin.load_segments();
    assert_eq!(segs.len(), re.loads.len());
    for (s, (off, va, filesz, memsz, flags)) in segs.iter().zip(&re.loads) {
        assert_eq!(
            (s.offset, s.vaddr, s.filesz, s.memsz),
            (*off, *va, *filesz, *memsz)
        );
        assert_eq!(s.executable, flags.contains('E'), "flags {flags}");
        // Mapping round trip at the start, middle and last file byte.
        for k in [0, s.filesz / 2, s.filesz.saturating_sub(1)] {
            if s.filesz == 0 {
                continue;
            }
            assert_eq!(bin.vaddr_to_file_offset(s.vaddr + k), Some(s.offset + k));
            // Segments may share file pages (e.g. RELRO), so the reverse map
            // may pick an earlier segment; it must still map back.
            let va = bin.file_offset_to_vaddr(s.offset + k).unwrap();
            assert_eq!(bin.vaddr_to_file_offset(va), Some(s.offset + k));
        }
        if s.memsz > s.filesz {
            // .bss has no file bytes.
            assert_eq!(bin.vaddr_to_file_offset(s.vaddr + s.memsz - 1), None);
        }
    }
    // llvm-profgen: first executable PT_LOAD, rounded down to 4 KiB.
    let (_, first_x_va, _, _, _) = re.loads.iter().find(|l| l.4.contains('E')).unwrap();
    assert_eq!(bin.preferred_base(), first_x_va & !0xfff);
    if !expect_pie {
        assert!(bin.preferred_base() >= 0x200000, "non-PIE links high");
    }
    assert!(bin.symbol_address("main").is_some() || expect_type == "DYN");
}

#[test]
fn pie_non_pie_and_shared_library() {
    if !kfdo_testkit::require_tools(&["clang-19", "llvm-readelf-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let flags = ["-O2", "-g", "-Wl,--build-id"];
    let pie = build(
        dir.path(),
        "interp.c",
        "pie",
        &[&flags[..], &["-fPIE", "-pie"]].concat(),
    );
    check(&pie, true, "DYN");
    let exe = build(
        dir.path(),
        "interp.c",
        "exe",
        &[&flags[..], &["-no-pie", "-fno-pie"]].concat(),
    );
    check(&exe, false, "EXEC");
    let so = build(
        dir.path(),
        "interp.c",
        "lib.so",
        &[&flags[..], &["-shared", "-fPIC"]].concat(),
    );
    check(&so, true, "DYN");

    // No build-id note at all.
    let none = build(
        dir.path(),
        "interp.c",
        "noid",
        &["-O2", "-Wl,--build-id=none"],
    );
    assert_eq!(Binary::open(&none).unwrap().build_id(), None);
}

/// A kernel-like image per architecture: static, ET_EXEC, `_text` where that
/// architecture links a vmlinux (x86-64 0xffffffff81000000, arm64 with 48-bit VAs
/// 0xffff800080000000), is a kernel; the same code linked at a user address is not.
#[test]
fn kernel_images_by_architecture() {
    if !kfdo_testkit::require_tools(&["clang-19", "ld.lld-19"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.c");
    std::fs::write(
        &src,
        "void start_kernel(void) { for (;;) ; }\n\
         __attribute__((section(\".head.text\"))) void _text(void) { start_kernel(); }\n",
    )
    .unwrap();
    for (target, base, arch) in [
        (
            "x86_64-linux-gnu",
            "0xffffffff81000000",
            kfdo_elf::Arch::X86_64,
        ),
        (
            "aarch64-linux-gnu",
            "0xffff800080000000",
            kfdo_elf::Arch::Aarch64,
        ),
    ] {
        let obj = dir.path().join(format!("{target}.o"));
        let target_flag = format!("--target={target}");
        let mut args = vec![target_flag.as_str(), "-O2", "-ffreestanding", "-fno-pic"];
        if arch == kfdo_elf::Arch::X86_64 {
            // Code linked in the top 2 GiB, as x86-64 kernels are.
            args.push("-mcmodel=kernel");
        }
        args.extend(["-c", src.to_str().unwrap(), "-o", obj.to_str().unwrap()]);
        run("clang-19", &args);
        // A relocatable arm64 kernel (CONFIG_RELOCATABLE) is linked with -pie: ET_DYN at
        // the kernel's address is a kernel too; a user PIE is not.
        for (at, pie, kernel) in [
            (base, false, true),
            (base, true, true),
            ("0x400000", false, false),
            ("0x400000", true, false),
        ] {
            let out = dir.path().join(format!("{target}-{at}-{pie}"));
            let (image_base, text) = (format!("--image-base={at}"), format!("-Ttext={at}"));
            let mut link = vec!["-e", "_text", &image_base, &text];
            link.push(if pie { "-pie" } else { "-static" });
            link.extend([obj.to_str().unwrap(), "-o", out.to_str().unwrap()]);
            run("ld.lld-19", &link);
            let bin = Binary::open(&out).unwrap();
            assert_eq!(bin.arch(), arch);
            assert_eq!(bin.is_pie(), pie);
            assert_eq!(
                bin.is_kernel(),
                kernel,
                "{target} linked at {at} (pie: {pie})"
            );
        }
    }
}
