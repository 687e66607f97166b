//! One line of `/proc/self/maps`: `start-end perms offset maj:min inode   path` (hex but
//! for the inode).

pub struct MapsLine<'a> {
    pub start: u64,
    pub end: u64,
    /// PROT_READ | PROT_WRITE | PROT_EXEC bits from `rwx`.
    pub prot: u32,
    pub off: u64,
    pub maj: u32,
    pub min: u32,
    pub ino: u64,
    pub path: &'a [u8],
}

pub fn parse_maps_line(line: &[u8]) -> Option<MapsLine<'_>> {
    let s = line;
    let mut fields = Vec::with_capacity(6);
    let mut i = 0;
    while fields.len() < 5 {
        while i < s.len() && s[i] == b' ' {
            i += 1;
        }
        let st = i;
        while i < s.len() && s[i] != b' ' {
            i += 1;
        }
        if st == i {
            return None;
        }
        fields.push(&s[st..i]);
    }
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    let path = &s[i..];
    let hex = |x: &[u8]| u64::from_str_radix(std::str::from_utf8(x).ok()?, 16).ok();
    let range = fields[0];
    let dash = range.iter().position(|&c| c == b'-')?;
    let dev = fields[3];
    let colon = dev.iter().position(|&c| c == b':')?;
    Some(MapsLine {
        start: hex(&range[..dash])?,
        end: hex(&range[dash + 1..])?,
        prot: {
            let p = fields[1];
            (p.first() == Some(&b'r')) as u32
                | ((p.get(1) == Some(&b'w')) as u32) << 1
                | ((p.get(2) == Some(&b'x')) as u32) << 2
        },
        off: hex(fields[2])?,
        maj: hex(&dev[..colon])? as u32,
        min: hex(&dev[colon + 1..])? as u32,
        ino: std::str::from_utf8(fields[4]).ok()?.parse().ok()?,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_mapping() {
        let l = b"4000000000-4000002000 r-xp 00001000 fe:01 10002575                   /tmp/a b";
        let m = parse_maps_line(l).unwrap();
        assert_eq!(
            (m.start, m.end, m.off),
            (0x40_0000_0000, 0x40_0000_2000, 0x1000)
        );
        assert_eq!(m.prot, 5);
        assert_eq!((m.maj, m.min, m.ino), (0xfe, 1, 10002575));
        assert_eq!(m.path, b"/tmp/a b", "spaces inside the path are kept");
    }

    #[test]
    fn anonymous_and_special() {
        let m = parse_maps_line(b"7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(m.prot, 3);
        assert_eq!(m.path, b"");
        let m = parse_maps_line(b"7ffd1000-7ffd2000 ---p 00000000 00:00 0  [stack]").unwrap();
        assert_eq!((m.prot, m.path), (0, &b"[stack]"[..]));
    }

    #[test]
    fn malformed() {
        assert!(parse_maps_line(b"").is_none());
        assert!(
            parse_maps_line(b"4000-5000 r-xp 0 fe:01").is_none(),
            "too few fields"
        );
        assert!(
            parse_maps_line(b"4000 r-xp 0 fe:01 1 /x").is_none(),
            "no range"
        );
        assert!(
            parse_maps_line(b"4000-5000 r-xp 0 fe01 1 /x").is_none(),
            "no device"
        );
        assert!(
            parse_maps_line(b"4000-5000 r-xp 0 fe:01 x /x").is_none(),
            "inode"
        );
        assert!(
            parse_maps_line(b"40g0-5000 r-xp 0 fe:01 1 /x").is_none(),
            "hex"
        );
    }
}
