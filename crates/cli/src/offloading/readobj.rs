//! `llvm-readobj --offloading` of LLVM 22 and main: the summary of each
//! object, then a URI per bundle entry.

use super::*;
use offload_kit_llvm::budget::Budget;

/// `raw_fd_ostream::preferred_buffer_size` of standard output: its
/// `st_blksize`, or unbuffered (0) when `fstat` fails.
#[cfg(target_os = "linux")]
fn preferred_buffer_size() -> usize {
    rustix::fs::fstat(std::io::stdout()).map_or(0, |st| st.st_blksize.max(0) as usize)
}

/// `raw_fd_ostream::preferred_buffer_size` where `fstat` is not at hand:
/// the usual block size.
#[cfg(not(target_os = "linux"))]
fn preferred_buffer_size() -> usize {
    4096
}

/// llvm-readobj's summary stream (`fouts()`): buffered in blocks of the
/// output's preferred size (`st_blksize`) unless standard output is a
/// terminal, while the URI lines go to standard output unbuffered. In a
/// pipe or file the summaries therefore come after the URI lines, in
/// blocks, as `raw_ostream::write` flushes them.
pub(super) struct Summary {
    buf: Vec<u8>,
    /// The block size; 0 when unbuffered.
    cap: usize,
}

impl Summary {
    pub(super) fn for_stdout() -> Summary {
        use std::io::IsTerminal;
        let cap = if std::io::stdout().is_terminal() {
            0
        } else {
            preferred_buffer_size()
        };
        Summary {
            buf: Vec::new(),
            cap,
        }
    }

    /// One summary as LLVM writes it: in pieces whose last is one byte
    /// (the closing newline), which matters when the text ends exactly on
    /// a block boundary (a full buffer waits for the next byte).
    fn write_summary(&mut self, text: &[u8]) {
        let (body, last) = text.split_at(text.len().saturating_sub(1));
        self.write(body);
        self.write(last);
    }

    /// `raw_ostream::write`.
    fn write(&mut self, mut data: &[u8]) {
        let mut out = std::io::stdout().lock();
        if self.cap == 0 {
            let _ = out.write_all(data);
            return;
        }
        loop {
            let space = self.cap - self.buf.len();
            if data.len() <= space {
                self.buf.extend_from_slice(data);
                return;
            }
            if self.buf.is_empty() {
                // Larger than the whole buffer: whole blocks straight through.
                let n = data.len() - data.len() % self.cap;
                let _ = out.write_all(&data[..n]);
                data = &data[n..];
                continue;
            }
            self.buf.extend_from_slice(&data[..space]);
            let _ = out.write_all(&self.buf);
            self.buf.clear();
            data = &data[space..];
        }
    }

    pub(super) fn flush(&mut self) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&self.buf);
        let _ = out.flush();
        self.buf.clear();
    }
}

pub(super) fn readobj_file(
    argv0: &str,
    f: &str,
    (release, budget): (Release, Budget),
    s: &mut Summary,
) -> Result<(), i32> {
    let o = match open(argv0, f, budget) {
        Ok(o) => o,
        Err(line) => {
            s.flush();
            elog(&line);
            return Err(1);
        }
    };
    let data = o.input.bytes();
    let error = |s: &mut Summary, line: String| {
        s.flush();
        elog(&format!("{argv0}: error: '{}': {line}", o.name));
        Err(1)
    };
    match llvm::input_kind(data) {
        InputKind::Elf => readobj_object(argv0, &Object::whole(&o), (release, budget), s),
        InputKind::Archive => match archive_objects(data, &o.input, &o.name) {
            Ok(objects) => {
                for obj in &objects {
                    readobj_object(argv0, obj, (release, budget), s)?;
                }
                Ok(())
            }
            Err(e) => error(
                s,
                format!("Invalid data was encountered while parsing the file [{e}]"),
            ),
        },
        InputKind::OffloadBinary => {
            let d = Error::at(
                rules::OB_1,
                0,
                "llvm-readobj 22 dies of SIGSEGV on an offload binary file (offload-kit reports instead)",
            );
            error(s, format!("{d}"))
        }
        InputKind::Bitcode => {
            s.flush();
            elog(&format!(
                "{argv0}: warning: '{}': bitcode files are not supported",
                o.name
            ));
            Ok(())
        }
        InputKind::Other => match coff_object(data) {
            Some(c) => {
                let summary = format!(
                    "\nFile: {}\nFormat: {}\nArch: {}\nAddressSize: {}bit\n",
                    o.name, c.readobj_format, c.arch, c.bits
                );
                s.write_summary(summary.as_bytes());
                if release.quirks().offloading_coff_images {
                    let found =
                        llvm_object::find_in_sections_as(&data, coff_sections(&c), release, budget);
                    print_uris(argv0, &Object::whole(&o), &found, s);
                    return Ok(());
                }
                match coff_offloading(&c, data) {
                    Ok(()) => Ok(()),
                    Err(m) if m == COFF_UNSUPPORTED || m == llvm_object::UNEXPECTED_EOF => {
                        s.flush();
                        elog(&format!("{argv0}: warning: '{}': {m}", o.name));
                        Ok(())
                    }
                    Err(m) => error(s, m),
                }
            }
            // LLVM 22 prints the summary, and nothing about offloading.
            None => match macho(data) {
                Some((format, arch, bits)) => {
                    let summary = format!(
                        "\nFile: {}\nFormat: {format}\nArch: {arch}\nAddressSize: {bits}bit\n",
                        o.name
                    );
                    s.write_summary(summary.as_bytes());
                    Ok(())
                }
                None => error(s, NOT_AN_OBJECT.to_string()),
            },
        },
    }
}

fn readobj_object(
    argv0: &str,
    obj: &Object<'_>,
    (release, budget): (Release, Budget),
    s: &mut Summary,
) -> Result<(), i32> {
    let summary = |id: llvm::ElfIdent, load_name: Option<String>| {
        let (is64, big) = (id.encoding.is64, id.encoding.big_endian);
        format!(
            "\nFile: {}\nFormat: {}\nArch: {}\nAddressSize: {}bit\nLoadName: {}\n",
            obj.shown,
            llvm::elf_format_name_of(id.machine, is64, big),
            llvm::elf_arch_name_of(id.machine, is64, big, id.flags),
            if is64 { 64 } else { 32 },
            load_name.unwrap_or_else(|| "<Not found>".into())
        )
    };
    let ident = llvm::elf_ident(obj.data);
    let elf = match Elf::parse(obj.data) {
        Ok(e) => e,
        Err(e) => {
            // The ELF header alone makes the summary; LLVM prints it, then
            // gives up on the rest.
            if let Some(id) = ident {
                s.write_summary(summary(id, None).as_bytes());
            }
            s.flush();
            let e = e.rebase(obj.base);
            match llvm::llvm_elf_error(obj.data) {
                Some(m) => elog(&format!(
                    "{argv0}: error: '{}': unable to continue dumping, the file is corrupt: {m} [{e}]",
                    obj.shown
                )),
                None => elog(&format!(
                    "{argv0}: error: '{}': unable to continue dumping, the file is corrupt: {e}",
                    obj.shown
                )),
            }
            return Err(1);
        }
    };
    let soname = elf
        .soname()
        .map(|n| String::from_utf8_lossy(n).into_owned());
    if let Some(id) = ident {
        s.write_summary(summary(id, soname).as_bytes());
    }
    let found = llvm_object::find_bundles_as(&elf, &obj.contents(), release, budget);
    print_uris(argv0, obj, &found, s);
    Ok(())
}

/// `printOffloading`: the failure as a warning, then a URI per entry.
fn print_uris(argv0: &str, obj: &Object<'_>, found: &llvm_object::Found, s: &mut Summary) {
    if let Some((m, d)) = &found.failure {
        s.flush();
        elog(&format!(
            "{argv0}: warning: '{}': {m} [{}]",
            obj.shown,
            d.clone().rebase(obj.base)
        ));
    }
    // Buffered: stdout is line-buffered, a write per line otherwise.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for e in &found.entries {
        // The ID is printed as a C string: up to its first NUL.
        let id = e.id.split(|&b| b == 0).next().unwrap_or_default();
        let _ = out.write_all(&crate::term::for_terminal(crate::term::Stream::Stdout, id));
        let _ = writeln!(
            out,
            "\tfile://{}#offset={}&size={}",
            obj.stem, e.offset, e.size
        );
    }
    let _ = out.flush();
}
