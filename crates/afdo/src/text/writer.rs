//! Text writer, byte-identical to LLVM's `SampleProfileWriterText`.

use std::io::Write;

use crate::error::AfdoError;
use crate::model::{FunctionSamples, LineLocation, Profile};

/// Write `p` in LLVM's text format. Fails (writing nothing) if the profile
/// cannot be represented (see [`Profile::validate`]).
pub fn write_text(p: &Profile, mut w: impl Write) -> Result<(), AfdoError> {
    p.validate().map_err(AfdoError::Invalid)?;
    let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
    for fs in p.sorted_functions() {
        write_fs(&mut buf, fs, 0);
        if buf.len() >= 1 << 20 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()?;
    Ok(())
}

fn indent(buf: &mut Vec<u8>, n: usize) {
    buf.resize(buf.len() + n, b' ');
}

fn num(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

fn loc(buf: &mut Vec<u8>, l: LineLocation) {
    num(buf, l.line_offset as u64);
    if l.discriminator != 0 {
        buf.push(b'.');
        num(buf, l.discriminator as u64);
    }
}

/// Header line (already indented and prefixed by the caller for inlinees),
/// then body lines at `depth + 1` spaces, then inlinees at `depth + 1` spaces.
fn write_fs(buf: &mut Vec<u8>, fs: &FunctionSamples, depth: usize) {
    buf.extend_from_slice(fs.name.as_bytes());
    buf.push(b':');
    num(buf, fs.total_samples);
    if depth == 0 {
        buf.push(b':');
        num(buf, fs.head_samples);
    }
    buf.push(b'\n');
    for (l, rec) in &fs.body {
        indent(buf, depth + 1);
        loc(buf, *l);
        buf.extend_from_slice(b": ");
        num(buf, rec.count);
        if !rec.call_targets.is_empty() {
            for (name, c) in rec.sorted_call_targets() {
                buf.push(b' ');
                buf.extend_from_slice(name.as_bytes());
                buf.push(b':');
                num(buf, c);
            }
        }
        buf.push(b'\n');
    }
    for (l, callees) in &fs.callsites {
        for callee in callees.values() {
            indent(buf, depth + 1);
            loc(buf, *l);
            buf.extend_from_slice(b": ");
            write_fs(buf, callee, depth + 1);
        }
    }
}
