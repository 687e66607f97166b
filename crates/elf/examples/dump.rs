//! Prints every decoded instruction of a binary with its kind and inline
//! stack, in llvm-profgen's `--show-source-locations` notation
//! (`leaf:offset[.disc] @ caller:offset[.disc]`). Handy for eyeballing
//! differences against `llvm-profgen --show-disassembly-only --show-source-locations`.
//!
//! usage: cargo run -p kfdo-elf --example dump -- BINARY

use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).ok_or("usage: dump BINARY")?;
    let bin = kfdo_elf::Binary::open(path.as_ref())?;
    let code = kfdo_elf::Code::new(&bin)?;
    let sym = kfdo_elf::Symbolizer::new(&bin).ok();
    let mut frames = Vec::new();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    for (addr, size, kind) in code.iter() {
        write!(out, "{addr:x} {size} {kind:?}")?;
        if let Some(s) = &sym {
            s.frames(addr, &mut frames);
            let mut first = true;
            for f in frames.iter().rev() {
                write!(out, "{}", if first { " " } else { " @ " })?;
                first = false;
                write!(out, "{}:{}", f.func, f.line_offset())?;
                if f.discriminator > 0 {
                    write!(out, ".{}", f.discriminator)?;
                }
            }
        }
        writeln!(out)?;
    }
    Ok(())
}
