//! Function names as the compiler will look them up.

/// The name the compiler will look the function up by: LLVM's
/// `getCanonicalFnName` ("selected" policy), implemented once in `kfdo-elf`
/// beside the symbolizer that produces the names: `.llvm.N` and `.part.N`
/// are stripped, `.__uniq.N` is kept.
pub fn canonical_name(name: &str) -> &str {
    let bytes = kfdo_elf::canonical_fn_name(name.as_bytes());
    // A prefix cut at an ASCII '.' of valid UTF-8 is valid UTF-8.
    std::str::from_utf8(bytes).unwrap_or(name)
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
