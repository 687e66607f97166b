use std::path::Path;

use super::{check, check_folder, violations};

fn m(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

const LAYERS: &[&[&str]] = &[
    &["error"],
    &["segments", "arch"],
    &["binary"],
    &["code", "dwarf"],
    &["symbolizer"],
];

fn root(file: &str, file_mod: &[&str], src: &str) -> Vec<String> {
    violations(file, &m(file_mod), &[], src, LAYERS, "the layer table")
}

/// The checker must see through the ways an upward import can be written, and
/// ignore what only looks like one.
#[test]
fn upward_imports_are_found_however_written() {
    let bad = "use crate::symbolizer::Symbolizer;\n\
               use crate::{error::ElfError, code::Code};\n\
               fn f() { super::dwarf::x(); }\n\
               use crate::Binary;\n";
    let v = root("src/binary.rs", &["binary"], bad);
    assert_eq!(v.len(), 4, "{v:#?}");
    assert!(
        v[0].starts_with("src/binary.rs:1: `crate::symbolizer`: `binary` (layer 3) may only use lower layers, `symbolizer` is layer 5"),
        "{v:#?}"
    );
    assert!(v[1].starts_with("src/binary.rs:2: `crate::code`"), "{v:#?}");
    assert!(
        v[2].starts_with("src/binary.rs:3: `super::dwarf`"),
        "{v:#?}"
    );
    assert!(v[3].contains("`Binary` is not a module"), "{v:#?}");

    // From a submodule, two `super`s reach the root.
    let v = root(
        "src/arch/x86_64.rs",
        &["arch", "x86_64"],
        "use super::super::binary::Binary;",
    );
    assert_eq!(v.len(), 1, "{v:#?}");
    assert!(v[0].contains("`super::super::binary`"), "{v:#?}");

    let v = root(
        "src/arch/x86_64.rs",
        &["arch", "x86_64"],
        "use super::super::super::x;",
    );
    assert!(v[0].contains("climbs above the crate root"), "{v:#?}");
}

#[test]
fn what_only_looks_like_an_upward_import_passes() {
    let fine = "// use crate::symbolizer;\n\
                /* use crate::code; /* nested */ */\n\
                const S: &str = \"crate::code\";\n\
                const R: &str = r#\"super::code \"quoted\"\"#;\n\
                const C: char = '{';\n\
                fn g<'a>(x: &'a u8) -> &'a u8 { x }\n\
                use super::segments::LoadSegment;\n\
                pub(crate) fn h() {}\n\
                macro_rules! m { () => { $crate::symbolizer::x() } }\n\
                mod tests { use super::*; use super::super::error::ElfError; }\n";
    let v = root("src/binary.rs", &["binary"], fine);
    assert!(v.is_empty(), "{v:#?}");

    let v = root("src/new.rs", &["new"], "");
    assert!(v[0].contains("not in the layer table"), "{v:#?}");
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A small crate: `error` at the bottom, `parse` above it, `kernel/` a folder of
/// sub-layers. Fine as written; each upward import added later is reported.
#[test]
fn a_tree_passes_until_a_lower_module_imports_a_higher_one() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    write(
        src,
        "lib.rs",
        "mod error;\nmod parse;\nmod kernel;\nuse kernel::x;\n",
    );
    write(src, "error.rs", "pub struct E;\n");
    write(src, "parse.rs", "use crate::error::E;\n");
    write(
        src,
        "kernel/mod.rs",
        "mod steps;\nmod plan;\nuse steps::S;\n",
    );
    write(
        src,
        "kernel/steps.rs",
        "use crate::parse;\nuse super::super::error::E;\n",
    );
    write(
        src,
        "kernel/plan.rs",
        "use super::steps::S;\nuse crate::kernel::steps;\n",
    );
    let layers: &[&[&str]] = &[&["error"], &["parse"], &["kernel"]];
    let kernel: &[&[&str]] = &[&["steps"], &["plan"]];
    assert_eq!(check(src, layers, &[]), Ok(()));
    assert_eq!(check_folder(src, "kernel", kernel, &[]), Ok(()));

    // The bottom layer reaches up to the top one.
    write(src, "error.rs", "pub struct E;\nuse crate::kernel::plan;\n");
    let e = check(src, layers, &[]).unwrap_err();
    assert_eq!(
        e,
        ["src/error.rs:2: `crate::kernel`: `error` (layer 1) may only use lower layers, `kernel` is layer 3"]
    );
    // Listed as unchecked, the file is left alone.
    assert_eq!(check(src, layers, &["error.rs"]), Ok(()));
    write(src, "error.rs", "pub struct E;\n");

    // Inside the folder: the lower sub-layer uses the higher one.
    write(src, "kernel/steps.rs", "use super::plan::P;\n");
    let e = check_folder(src, "kernel", kernel, &[]).unwrap_err();
    assert_eq!(
        e,
        ["src/kernel/steps.rs:1: `super::plan`: `steps` (layer 1) may only use lower layers, `plan` is layer 2"]
    );
    // The crate-level check does not look inside the folder.
    assert_eq!(check(src, layers, &[]), Ok(()));

    // A module missing from the table, and a name in it with no module.
    write(src, "kernel/steps.rs", "");
    write(src, "kernel/extra.rs", "");
    let e = check_folder(src, "kernel", &[&["steps"], &["plan", "gone"]], &[]).unwrap_err();
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(
        e[0].starts_with(
            "src/kernel/extra.rs: module `extra` is not in the layer table of kernel/"
        ),
        "{e:#?}"
    );
    assert!(
        e[1].starts_with("`gone` is in the layer table of kernel/"),
        "{e:#?}"
    );

    // A folder that does not exist.
    assert!(check_folder(src, "nowhere", kernel, &[]).is_err());
}

#[test]
fn a_module_declared_with_a_path_attribute_counts_as_present() {
    let text = "mod a;\n/// shared\n#[path = \"../x/shared.rs\"]\npub mod shared;\n#[path = \"y.rs\"]\n#[allow(dead_code)]\npub(crate) mod other;\nmod b;\n";
    assert_eq!(super::path_modules(text), ["shared", "other"]);
}

/// The crate doc is the table: a crate that keeps to its `# Layers` section passes,
/// an upward import or a module the section leaves out fails, with the file and line.
#[test]
fn a_crate_is_checked_against_the_layers_of_its_doc() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let lib = "//! A crate.\n\
               //!\n\
               //! # Layers\n\
               //!\n\
               //! 1. `error` (what fails)\n\
               //! 2. `parse`: reads.\n\
               //! 3. `kernel`\n\
               //!\n\
               //! Inside `kernel/`, bottom first:\n\
               //!\n\
               //! 1. `steps`\n\
               //! 2. `plan`, `tests`\n\
               //!\n\
               //! Not checked: `kernel/tests.rs` (it uses `mod.rs`'s own items).\n\
               \n\
               mod error;\nmod parse;\nmod kernel;\n";
    write(&src, "lib.rs", lib);
    write(&src, "error.rs", "pub struct E;\n");
    write(&src, "parse.rs", "use crate::error::E;\n");
    write(
        &src,
        "kernel/mod.rs",
        "mod steps;\nmod plan;\nmod tests;\npub fn run() {}\n",
    );
    write(&src, "kernel/steps.rs", "use crate::parse;\n");
    write(&src, "kernel/plan.rs", "use super::steps;\n");
    write(&src, "kernel/tests.rs", "use super::run;\n");
    let tables = super::crate_doc_layers(dir.path()).unwrap();
    assert_eq!(
        tables,
        [
            super::FolderLayers::new("", &[&["error"], &["parse"], &["kernel"]]),
            super::FolderLayers {
                unchecked: vec!["kernel/tests.rs".into()],
                ..super::FolderLayers::new("kernel", &[&["steps"], &["plan", "tests"]])
            },
        ]
    );
    assert_eq!(super::check_crate(dir.path(), &tables), Ok(()));

    // An upward import in the root's table and one in the folder's are both reported.
    write(&src, "parse.rs", "use crate::kernel::run;\n");
    write(&src, "kernel/steps.rs", "use super::plan;\n");
    let e = super::check_crate(dir.path(), &tables).unwrap_err();
    assert_eq!(
        e,
        [
            "src/parse.rs:1: `crate::kernel`: `parse` (layer 2) may only use lower layers, `kernel` is layer 3",
            "src/kernel/steps.rs:1: `super::plan`: `steps` (layer 1) may only use lower layers, `plan` is layer 2",
        ]
    );
    write(&src, "parse.rs", "");
    write(&src, "kernel/steps.rs", "");

    // A module the doc leaves out.
    write(
        &src,
        "lib.rs",
        &lib.replace("//! 2. `parse`: reads.\n", "//! 2. `kernel`\n")
            .replace("//! 3. `kernel`\n", ""),
    );
    let tables = super::crate_doc_layers(dir.path()).unwrap();
    let e = super::check_crate(dir.path(), &tables).unwrap_err();
    assert_eq!(e.len(), 1, "{e:#?}");
    assert!(
        e[0].starts_with("src/parse.rs: module `parse` is not in the layer table"),
        "{e:#?}"
    );
}

/// A table given in code (not read from a doc) checks the same way.
#[test]
fn one_per_layer_puts_each_module_above_the_one_before() {
    let t = super::FolderLayers::one_per_layer("kernel", &["a", "b", "c"]);
    assert_eq!(
        t,
        super::FolderLayers::new("kernel", &[&["a"], &["b"], &["c"]])
    );
}

/// A binary crate has no lib.rs: its crate doc is main.rs's.
#[test]
fn a_binary_crates_layers_are_read_from_main_rs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write(
        &src,
        "main.rs",
        "//! # Layers\n//!\n//! 1. `output`\n//! 2. `cmd`\n\nmod cmd;\nmod output;\n",
    );
    write(&src, "output.rs", "");
    write(&src, "cmd.rs", "use crate::output;\n");
    let tables = super::crate_doc_layers(dir.path()).unwrap();
    assert_eq!(
        tables,
        [super::FolderLayers::new("", &[&["output"], &["cmd"]])]
    );
    assert_eq!(super::check_crate(dir.path(), &tables), Ok(()));

    let none = tempfile::tempdir().unwrap();
    let e = super::crate_doc_layers(none.path()).unwrap_err();
    assert!(e.ends_with("no lib.rs or main.rs"), "{e}");
}

/// A table can go stale in two more ways: its folder is gone, or a file it leaves
/// unchecked is.
#[test]
fn a_table_for_a_missing_folder_or_file_fails() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    write(&src, "lib.rs", "mod error;\n");
    write(&src, "error.rs", "");
    let root = super::FolderLayers::new("", &[&["error"]]);
    assert_eq!(
        super::check_crate(dir.path(), std::slice::from_ref(&root)),
        Ok(())
    );

    let gone = super::FolderLayers::new("kernel", &[&["steps"]]);
    let e = super::check_crate(dir.path(), &[root.clone(), gone]).unwrap_err();
    assert!(e[0].contains("kernel"), "{e:#?}");

    let stale = super::FolderLayers {
        unchecked: vec!["tests.rs".into()],
        ..root
    };
    let e = super::check_crate(dir.path(), &[stale]).unwrap_err();
    assert_eq!(
        e,
        ["`tests.rs` is left unchecked but src/tests.rs does not exist (a stale entry)"]
    );
}
