//! The one repair kernel `.gcda` files need before GCC reads them: an object summary.
//!
//! A `.gcda` is a header (`gcda` magic, version, stamp, and from GCC 12 a checksum) and
//! records (tag, length, payload; 32-bit little-endian words; lengths count words up to
//! GCC 11 and bytes from GCC 12, whose runtime writes an all-zero counter record as a
//! negative length and no payload). GCC's runtime starts each file with an
//! `OBJECT_SUMMARY` record (runs, largest arc count). The kernel's debugfs files
//! (`kernel/gcov/gcc_4_7.c`) have none, and GCC, finding none, drops every count of the
//! file ("Profile info is missing; giving up" in `-fdump-ipa-profile`) without a
//! warning: a gcov kernel PGO build would silently be a build without a profile. So kfdo
//! adds the record a single run would have written: runs 1, the largest arc count.

const MAGIC: u32 = 0x6763_6461; // "gcda"
const TAG_FUNCTION: u32 = 0x0100_0000;
const TAG_ARCS: u32 = 0x01a1_0000;
const TAG_OBJECT_SUMMARY: u32 = 0xa100_0000;

/// How a release lays a file out: the header's length in words, and whether record
/// lengths count bytes (GCC 12 and later) or words.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    header_words: usize,
    bytes: bool,
}

const LAYOUTS: [Layout; 2] = [
    Layout {
        header_words: 4,
        bytes: true,
    },
    Layout {
        header_words: 3,
        bytes: false,
    },
];

/// The records of `words` under `layout` as (tag, payload word range), if the file is
/// exactly a sequence of them.
fn records(words: &[u32], layout: Layout) -> Option<Vec<(u32, std::ops::Range<usize>)>> {
    let mut out = Vec::new();
    let mut i = layout.header_words;
    while i < words.len() {
        let tag = *words.get(i)?;
        // GCC's runtime ends a file with a zero word; the kernel's writer does not.
        if tag == 0 && i + 1 == words.len() {
            break;
        }
        let len = *words.get(i + 1)? as usize;
        let n = if layout.bytes && (len as i32) < 0 {
            // GCC 12's runtime writes counters that are all zero as a negative length
            // and no payload.
            0
        } else if layout.bytes {
            len.is_multiple_of(4).then_some(len / 4)?
        } else {
            len
        };
        let body = i + 2..i + 2 + n;
        if body.end > words.len() {
            return None;
        }
        out.push((tag, body.clone()));
        i = body.end;
    }
    // A file of records: it starts with a function (or is empty of them).
    out.first()
        .is_none_or(|(t, _)| *t == TAG_FUNCTION || *t == TAG_OBJECT_SUMMARY)
        .then_some(out)
}

/// `data` with an object summary (runs 1, the largest arc count) after its header,
/// unchanged if it has one, and its largest arc count; an error saying what is wrong
/// with a file that is no gcda.
pub fn with_object_summary(data: &[u8]) -> Result<(Vec<u8>, u64), String> {
    if !data.len().is_multiple_of(4) || data.len() < 12 {
        return Err(format!(
            "{} bytes: not a .gcda (a whole number of 32-bit words, a 3- or 4-word header)",
            data.len()
        ));
    }
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if words[0] != MAGIC {
        return Err(format!("magic {:#010x}, not a .gcda's", words[0]));
    }
    let (layout, recs) = LAYOUTS
        .iter()
        .find_map(|&l| records(&words, l).map(|r| (l, r)))
        .ok_or("its records do not add up to its length (a cut or corrupted .gcda)")?;
    let sum_max = recs
        .iter()
        .filter(|(t, _)| *t == TAG_ARCS)
        .flat_map(|(_, r)| {
            words[r.clone()]
                .chunks_exact(2)
                .map(|c| u64::from(c[0]) | (u64::from(c[1]) << 32))
        })
        .max()
        .unwrap_or(0);
    if recs.iter().any(|(t, _)| *t == TAG_OBJECT_SUMMARY) {
        return Ok((data.to_vec(), sum_max));
    }
    let len = if layout.bytes { 8 } else { 2 };
    let summary = [
        TAG_OBJECT_SUMMARY,
        len,
        1,
        u32::try_from(sum_max).unwrap_or(u32::MAX),
    ];
    let at = layout.header_words * 4;
    let mut out = Vec::with_capacity(data.len() + 16);
    out.extend_from_slice(&data[..at]);
    for w in summary {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&data[at..]);
    Ok((out, sum_max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn kernel_files_of_both_layouts_gain_the_summary_a_run_writes() {
        // GCC 12: checksum in the header, lengths in bytes; arcs 5 and 2^32 + 7.
        let gcc12 = bytes(&[
            MAGIC,
            0x4232_322a,
            7,
            0,
            TAG_FUNCTION,
            12,
            1,
            2,
            3,
            TAG_ARCS,
            16,
            5,
            0,
            7,
            1,
        ]);
        let (fixed, max) = with_object_summary(&gcc12).unwrap();
        assert_eq!(max, (1 << 32) + 7);
        assert_eq!(
            &fixed[16..32],
            &bytes(&[TAG_OBJECT_SUMMARY, 8, 1, u32::MAX])[..]
        );
        assert_eq!(&fixed[32..], &gcc12[16..]);
        assert_eq!(with_object_summary(&fixed).unwrap().0, fixed, "added once");
        // GCC 11: no checksum, lengths in words.
        let gcc11 = bytes(&[
            MAGIC,
            0x4231_312a,
            7,
            TAG_FUNCTION,
            3,
            1,
            2,
            3,
            TAG_ARCS,
            2,
            9,
            0,
        ]);
        let (fixed, _) = with_object_summary(&gcc11).unwrap();
        assert_eq!(&fixed[12..28], &bytes(&[TAG_OBJECT_SUMMARY, 2, 1, 9])[..]);
        // Not a gcda, or cut short.
        assert!(with_object_summary(b"gcno1234abcd")
            .unwrap_err()
            .contains("magic"));
        let cut = &gcc12[..gcc12.len() - 4];
        assert!(with_object_summary(cut)
            .unwrap_err()
            .contains("do not add up"));
    }

    /// What gcc-12's own runtime writes, less its summary, is repaired to the same bytes.
    #[test]
    fn the_repair_restores_what_gccs_runtime_writes() {
        if !kfdo_testkit::require_tools(&["gcc-12"]) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("t.c");
        std::fs::write(
            &src,
            "int f(int x){int s=0;for(int i=0;i<x;i++)s+=i%3?i:-1;return s;}\n\
             int main(int c,char**v){(void)v;return f(5000+c)&1;}\n",
        )
        .unwrap();
        let exe = dir.path().join("t");
        let ok = std::process::Command::new("gcc-12")
            .args(["-O2", "-fprofile-arcs"])
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
        assert!(std::process::Command::new(&exe).status().is_ok());
        let gcda = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "gcda"))
            .expect("the run wrote a .gcda");
        let written = std::fs::read(gcda).unwrap();
        // gcc-12: 16-byte header, then the summary record (16 bytes).
        assert_eq!(&written[16..20], &TAG_OBJECT_SUMMARY.to_le_bytes());
        let mut stripped = written[..16].to_vec();
        stripped.extend_from_slice(&written[32..]);
        assert_eq!(with_object_summary(&stripped).unwrap(), (written, 5001));
    }
}
