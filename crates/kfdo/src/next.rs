//! The step after each command, as the line to type: `kfdo record` names the `kfdo
//! profile` of its recording, `kfdo profile` the compiler (or post-link) command that
//! reads the profile it wrote.

use kfdo_convert::Compiler;
use kfdo_convert::OutputFormat;
use std::path::Path;

fn word(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `kfdo profile [FLAGS] --binary BIN --perf-data DATA -o OUT`, quoted for a shell.
pub fn profile_command(flags: &[String], binary: &Path, perf_data: &Path, output: &Path) -> String {
    let mut words: Vec<String> = vec!["kfdo".into(), "profile".into()];
    words.extend(flags.iter().cloned());
    words.extend([
        "--binary".into(),
        word(binary),
        "--perf-data".into(),
        word(perf_data),
        "-o".into(),
        word(output),
    ]);
    shell_words::join(words)
}

/// `kfdo profile [FLAGS] --binary BIN --from-raw FILE -o BIN.afdo`: one host's raw
/// Parquet file made a sample profile.
pub fn from_raw_command(flags: &[String], binary: &Path, parquet: &Path) -> String {
    let mut words: Vec<String> = vec!["kfdo".into(), "profile".into()];
    words.extend(flags.iter().cloned());
    words.extend([
        "--binary".into(),
        word(binary),
        "--from-raw".into(),
        word(parquet),
        "-o".into(),
        word(&profile_path(binary, parquet)),
    ]);
    shell_words::join(words)
}

/// The profile's name beside its recording, in the format `kfdo profile` writes by
/// default for the binary: `BIN.gcov` for a binary GCC built (GCC's AutoFDO format,
/// which clang cannot read), else `BIN.afdo`.
pub fn profile_path(binary: &Path, perf_data: &Path) -> std::path::PathBuf {
    let stem = binary
        .file_name()
        .map_or_else(|| "profile".into(), |n| n.to_string_lossy().into_owned());
    let ext = match kfdo_convert::built_by(binary) {
        Some(Compiler::Gcc(_)) => "gcov",
        _ => "afdo",
    };
    perf_data.with_file_name(format!("{stem}.{ext}"))
}

/// What reads a profile `kfdo profile` wrote.
pub struct Written<'a> {
    pub format: OutputFormat,
    pub kernel: bool,
    pub binary: &'a Path,
    pub output: &'a Path,
    /// Propeller's two files (cc profile, ld profile).
    pub propeller: Option<(&'a str, &'a str)>,
    /// The compiler that will read the profile: for gcov, the GCC release the file
    /// was written for; else the one that built the binary.
    pub compiler: Option<Compiler>,
}

/// The compiler command: the release that reads the profile when it is one of
/// `family` (`clang-19`, `gcc-12`), else the unversioned `family`.
fn compiler_command(w: &Written<'_>, family: &str) -> String {
    match w.compiler {
        Some(c @ Compiler::Clang(_)) if family == "clang" => c.command(),
        Some(c @ Compiler::Gcc(_)) if family == "gcc" => c.command(),
        _ => family.to_string(),
    }
}

/// kbuild's LLVM= value: `-19` (clang-19, ld.lld-19, ...) for a release, else `1`.
fn kbuild_llvm(w: &Written<'_>) -> String {
    match w.compiler {
        Some(Compiler::Clang(major)) => format!("-{major}"),
        _ => "1".into(),
    }
}

/// The command (or flags) that consume the profile.
pub fn consume(w: &Written<'_>) -> String {
    let out = word(w.output);
    let quoted = |s: &str| shell_words::quote(s).into_owned();
    match (w.format, w.kernel) {
        (OutputFormat::Extbinary | OutputFormat::Text, false) => format!(
            "{} -fprofile-sample-use={}",
            compiler_command(w, "clang"),
            quoted(&out)
        ),
        (OutputFormat::Extbinary | OutputFormat::Text, true) => format!(
            "make LLVM={} CLANG_AUTOFDO_PROFILE={} (with CONFIG_AUTOFDO_CLANG=y)",
            kbuild_llvm(w),
            quoted(&out)
        ),
        (OutputFormat::Gcov, false) => format!(
            "{} -fauto-profile={}",
            compiler_command(w, "gcc"),
            quoted(&out)
        ),
        (OutputFormat::Gcov, true) => match w.compiler {
            Some(c @ Compiler::Gcc(_)) => format!(
                "make CC={} KCFLAGS=-fauto-profile={}",
                c.command(),
                quoted(&out)
            ),
            _ => format!("make KCFLAGS=-fauto-profile={}", quoted(&out)),
        },
        (OutputFormat::Propeller, kernel) => {
            let (cc, ld) = w.propeller.unwrap_or_default();
            if kernel {
                // kbuild names the two files PREFIX_cc_profile.txt and PREFIX_ld_profile.txt.
                format!(
                    "make LLVM={} CLANG_PROPELLER_PROFILE_PREFIX={} (with CONFIG_PROPELLER_CLANG=y)",
                    kbuild_llvm(w),
                    quoted(&out)
                )
            } else {
                format!(
                    "{} -fuse-ld=lld -fbasic-block-address-map -fbasic-block-sections=list={} \
                     -Wl,--symbol-ordering-file={}",
                    compiler_command(w, "clang"),
                    quoted(cc),
                    quoted(ld)
                )
            }
        }
        (OutputFormat::Bolt, _) => {
            let bin = word(w.binary);
            let options = kfdo_optimize::program::flags::BOLT_OPTIONS
                .iter()
                .filter(|o| **o != "-dyno-stats")
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            format!(
                "llvm-bolt {} -o {} -data={} {options}",
                quoted(&bin),
                quoted(&format!("{bin}.bolt")),
                quoted(&out)
            )
        }
        (OutputFormat::Unsymbolized, kernel) => {
            let flags = if kernel {
                vec!["--kernel".to_string()]
            } else {
                Vec::new()
            };
            let mut words: Vec<String> = vec!["kfdo".into(), "profile".into()];
            words.extend(flags);
            words.extend([
                "--binary".into(),
                word(w.binary),
                "--unsymbolized-in".into(),
                out.clone(),
                "-o".into(),
                word(&profile_path(w.binary, w.output)),
            ]);
            shell_words::join(words)
        }
    }
}

/// For an LLVM sample profile without a single discriminator: the binary was built
/// without -fdebug-info-for-profiling, and what to do about it.
pub fn discriminators_note(binary: &Path) -> String {
    format!(
        "{} has no discriminators (built without -fdebug-info-for-profiling), so the profile \
         cannot tell apart the blocks of one line; for a better profile add \
         -fdebug-info-for-profiling to the build you record and to the optimized build, \
         then record and profile again",
        binary.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_command_quotes_paths_for_a_shell() {
        assert_eq!(
            profile_command(
                &[],
                Path::new("/t/my prog"),
                Path::new("/t/p.data"),
                Path::new("/t/my prog.afdo")
            ),
            "kfdo profile --binary '/t/my prog' --perf-data /t/p.data -o '/t/my prog.afdo'"
        );
    }

    #[test]
    fn each_format_names_its_consumer() {
        let w = |format, kernel| Written {
            format,
            kernel,
            binary: Path::new("/b/prog"),
            output: Path::new("/b/out"),
            propeller: Some(("/b/out_cc_profile.txt", "/b/out_ld_profile.txt")),
            compiler: None,
        };
        assert_eq!(
            consume(&w(OutputFormat::Extbinary, false)),
            "clang -fprofile-sample-use=/b/out"
        );
        assert_eq!(
            consume(&w(OutputFormat::Gcov, false)),
            "gcc -fauto-profile=/b/out"
        );
        assert!(consume(&w(OutputFormat::Extbinary, true)).contains("CLANG_AUTOFDO_PROFILE=/b/out"));
        assert!(consume(&w(OutputFormat::Propeller, false))
            .contains("-fbasic-block-sections=list=/b/out_cc_profile.txt"));
        assert!(consume(&w(OutputFormat::Bolt, false))
            .starts_with("llvm-bolt /b/prog -o /b/prog.bolt -data=/b/out -reorder-blocks=ext-tsp"));
    }

    #[test]
    fn the_compiler_named_is_the_release_that_reads_the_profile() {
        let w = |format, kernel, compiler| Written {
            format,
            kernel,
            binary: Path::new("/b/prog"),
            output: Path::new("/b/out"),
            propeller: Some(("/b/cc.txt", "/b/ld.txt")),
            compiler,
        };
        let clang = Some(Compiler::Clang(19));
        let gcc = Some(Compiler::Gcc(12));
        assert_eq!(
            consume(&w(OutputFormat::Extbinary, false, clang)),
            "clang-19 -fprofile-sample-use=/b/out"
        );
        assert_eq!(
            consume(&w(OutputFormat::Gcov, false, gcc)),
            "gcc-12 -fauto-profile=/b/out"
        );
        // A clang profile of a binary GCC built: clang reads it, of no known release.
        assert_eq!(
            consume(&w(OutputFormat::Extbinary, false, gcc)),
            "clang -fprofile-sample-use=/b/out"
        );
        assert!(consume(&w(OutputFormat::Propeller, false, clang)).starts_with("clang-19 "));
        assert!(consume(&w(OutputFormat::Extbinary, true, clang)).starts_with("make LLVM=-19 "));
        assert!(consume(&w(OutputFormat::Gcov, true, gcc)).starts_with("make CC=gcc-12 "));
    }
}
