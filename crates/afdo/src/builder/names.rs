//! Function names as the compiler will look them up.

/// LLVM's `getCanonicalFnName` with the default "selected" policy: strip the
/// `.llvm.N` (ThinLTO promotion) and `.part.N` (partial inlining) suffixes a
/// compiler adds after the fact, but keep `.__uniq.N` (from
/// `-funique-internal-linkage-names`), which is part of the source-level name
/// the profile is matched with. A suffix is stripped only when it is the last
/// dotted component, so `foo.llvm.1.bar` stays as it is.
pub fn canonical_name(name: &str) -> &str {
    let mut cand = name;
    for suffix in [".llvm.", ".part."] {
        if let Some(at) = cand.rfind(suffix) {
            if cand.rfind('.') == Some(at + suffix.len() - 1) {
                cand = &cand[..at];
            }
        }
    }
    cand
}

#[cfg(test)]
mod tests {
    use super::canonical_name;

    #[test]
    fn strips_compiler_suffixes_only() {
        assert_eq!(canonical_name("foo"), "foo");
        assert_eq!(canonical_name("foo.llvm.123"), "foo");
        assert_eq!(canonical_name("foo.part.0"), "foo");
        assert_eq!(canonical_name("foo.part.0.llvm.77"), "foo");
        assert_eq!(canonical_name("foo.__uniq.1234"), "foo.__uniq.1234");
        assert_eq!(canonical_name("foo.__uniq.1234.llvm.5"), "foo.__uniq.1234");
        assert_eq!(canonical_name("foo.llvm.1.bar"), "foo.llvm.1.bar");
        assert_eq!(canonical_name("_ZN3fooC2Ev"), "_ZN3fooC2Ev");
    }
}
