//! The step after the commands whose output is read as it is: `kfdo report` and
//! `kfdo heatmap` name the page or picture to open, `kfdo merge` the compiler flag that
//! reads the merged profile. Beside `next` (the steps after a recording and a profile),
//! so that each file keeps one job.

use std::path::Path;

fn quoted(p: &Path) -> String {
    shell_words::quote(&p.to_string_lossy()).into_owned()
}

/// Opens the report's page (`report.md` beside it is the same as text).
pub fn report(index: &Path) -> String {
    format!("xdg-open {}", quoted(index))
}

/// Opens the heat map's SVG (the picture with function labels); with a store, the
/// report that shows it beside the runs.
pub fn heatmap(svg: &Path, store: Option<&Path>) -> String {
    match store {
        Some(db) => format!("kfdo report --store {}", quoted(db)),
        None => format!("xdg-open {}", quoted(svg)),
    }
}

/// The flag that builds with a merged profile: an LLVM sample profile (kfdo merge reads
/// and writes only those), read by clang, or by kbuild for a kernel.
pub fn merged(profile: &Path) -> String {
    let p = quoted(profile);
    format!(
        "clang -fprofile-sample-use={p} (a kernel: make LLVM=1 CLANG_AUTOFDO_PROFILE={p} \
         with CONFIG_AUTOFDO_CLANG=y)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_names_its_output_quoted_for_a_shell() {
        assert_eq!(
            report(Path::new("my report/index.html")),
            "xdg-open 'my report/index.html'"
        );
        assert_eq!(heatmap(Path::new("h.svg"), None), "xdg-open h.svg");
        assert_eq!(
            heatmap(Path::new("h.svg"), Some(Path::new("r.db"))),
            "kfdo report --store r.db"
        );
        assert!(merged(Path::new("m.afdo")).starts_with("clang -fprofile-sample-use=m.afdo "));
    }
}
