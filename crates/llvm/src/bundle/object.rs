//! Object-file bundles (fat objects): strict reader, LLVM reader model, writer.
//!
//! `clang-offload-bundler -type=o` with an object-file host input keeps the
//! host object and adds one section per target, named
//! `__CLANG_OFFLOAD_BUNDLE__<ID>`, holding the target's code object. The
//! host's own section holds a single 0x00 byte: the host code object is
//! the fat object itself. See `spec/object-bundle.md`.
//!
//! Data flows bytes → [`Elf`] → [`Entry`] list → bytes. [`scan`] walks the
//! sections the way every LLVM release does (section order, name prefix);
//! [`parse_strict`] turns every irregularity into an [`Error`] citing the
//! spec; [`llvm_payload`] is what a release writes when it unbundles an
//! entry (the 1-byte 0x00 quirk included); [`bundle`] is the writer,
//! [`elf::add_sections`] in place of `llvm-objcopy`.

use crate::bundle::binary;
use crate::error::{Error, Errors, Result};
use crate::format::bundle::MAGIC;
use crate::host::elf::{self, Elf, SHF_ALLOC, SHF_EXCLUDE, SHF_WRITE, SHT_PROGBITS};
use crate::id::BundleEntryId;
use crate::profile::Release;
use crate::rules;
use std::borrow::Cow;

/// The section-name prefix of a bundle section (the binary-bundle magic).
pub const SECTION_PREFIX: &str = "__CLANG_OFFLOAD_BUNDLE__";

/// The content of the host entry's section: one 0x00 byte.
pub const HOST_MARKER: &[u8] = &[0];

/// One bundle section: the bundle entry it is (dereferences to it), and
/// the section's own fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The section as a bundle entry: the ID is the section name after the
    /// prefix (`id_pos` inside the section name table), `offset` and
    /// `size` are the section contents' (`sh_offset`, `sh_size`, absolute
    /// in the file), `record_pos` is the section header's offset.
    pub entry: binary::Entry<'a>,
    /// Section index.
    pub section: usize,
    /// `sh_type`.
    pub sh_type: u32,
    /// `sh_flags`.
    pub flags: u64,
}

impl<'a> std::ops::Deref for Entry<'a> {
    type Target = binary::Entry<'a>;
    fn deref(&self) -> &binary::Entry<'a> {
        &self.entry
    }
}

impl<'a> Entry<'a> {
    /// The section contents within `file` (the whole object), if in range.
    /// Sections without file bytes (`SHT_NOBITS`) read as empty.
    pub fn payload(&self, file: &'a [u8]) -> Option<&'a [u8]> {
        if self.sh_type == elf::SHT_NOBITS {
            return Some(&[]);
        }
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.size).ok()?)?;
        file.get(start..end)
    }

    /// Whether the contents are exactly the host marker (one 0x00 byte):
    /// what every LLVM release takes for the host entry, whatever the ID.
    pub fn is_host_marker(&self, file: &[u8]) -> bool {
        self.payload(file) == Some(HOST_MARKER)
    }

    /// The offload kind: the ID up to its first '-'.
    pub fn kind(&self) -> &'a [u8] {
        self.id.split(|&b| b == b'-').next().unwrap_or(&[])
    }

    /// The entry as a binary-bundle entry, as every release's object-file
    /// handler yields it: an `SHT_NOBITS` section has no bytes in the file,
    /// so its size reads as 0 (every release writes an empty output for
    /// it); otherwise the section's offset and size.
    pub fn to_binary_entry(self) -> binary::Entry<'a> {
        binary::Entry {
            size: if self.sh_type == elf::SHT_NOBITS {
                0
            } else {
                self.size
            },
            ..self.entry
        }
    }
}

/// Whether a section name marks a bundle section.
pub fn is_bundle_section(name: &[u8]) -> bool {
    name.starts_with(MAGIC)
}

/// Whether `data` is an object file that LLVM's `-type=o` reads with its
/// object-file handler (any object format; offload-kit reads ELF only).
pub fn is_object_file(data: &[u8]) -> bool {
    elf::detect(data).is_object_file()
}

/// The bundle sections of `elf` in section header order (OBJ-9): what
/// every LLVM release's `ObjectFileHandler` walks.
pub fn scan<'a>(elf: &Elf<'a>) -> Vec<Entry<'a>> {
    let p = SECTION_PREFIX.len();
    elf.sections
        .iter()
        .filter(|s| is_bundle_section(s.name))
        .map(|s| Entry {
            entry: binary::Entry {
                id: s.name.get(p..).unwrap_or(&[]),
                offset: s.offset,
                size: s.size,
                record_pos: s.header_pos,
                id_pos: s.name_pos + p as u64,
            },
            section: s.index,
            sh_type: s.sh_type,
            flags: s.flags,
        })
        .collect()
}

/// An object-file bundle that passed the strict reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectBundle<'a> {
    /// The parsed ELF file.
    pub elf: Elf<'a>,
    /// Entries in section order (OBJ-9).
    pub entries: Vec<Entry<'a>>,
    /// Index (into `entries`) of the host entry.
    pub host: usize,
}

impl<'a> ObjectBundle<'a> {
    /// The contents of entry `i`'s section (the host marker for the host).
    pub fn payload(&self, i: usize) -> &'a [u8] {
        self.entries
            .get(i)
            .and_then(|e| e.payload(self.elf.data))
            .unwrap_or(&[])
    }

    /// Find an entry by exact ID.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id.as_bytes())
    }

    /// The code object of entry `i` as the strict layer unbundles it: the
    /// section contents for a device entry, the stripped object (OBJ-11)
    /// for the host.
    pub fn code_object(&self, i: usize) -> Result<Cow<'a, [u8]>> {
        if i == self.host {
            Ok(Cow::Owned(strip(self.elf.data)?))
        } else {
            Ok(Cow::Borrowed(self.payload(i)))
        }
    }
}

/// Strict reader (spec chapter `object-bundle.md`): every violation found
/// is returned, each with its absolute offset and rule.
pub fn parse_strict(data: &[u8]) -> Result<ObjectBundle<'_>, Errors> {
    let elf = Elf::parse(data).map_err(|e| vec![e])?;
    let mut errs = elf.check();
    let entries = scan(&elf);
    let (host, more) = check_entries(&elf, &entries);
    errs.extend(more);
    if !errs.is_empty() {
        errs.sort_by_key(|e| e.offset());
        return Err(errs.into());
    }
    let Some(host) = host else {
        return Err(vec![Error::other("internal: no host entry")].into());
    };
    Ok(ObjectBundle { elf, entries, host })
}

/// The bundle rules (OBJ-4 … OBJ-8) for `entries` of `elf`; returns the
/// host entry's index when there is exactly one.
pub fn check_entries(elf: &Elf<'_>, entries: &[Entry<'_>]) -> (Option<usize>, Vec<Error>) {
    let data = elf.data;
    let mut errs = Vec::new();
    let mut hosts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.id.is_empty() {
            errs.push(Error::at(
                rules::OBJ_4,
                e.id_pos,
                format!(
                    "bundle section {}: the name is the bare prefix, with no entry ID",
                    e.section
                ),
            ));
        } else {
            match std::str::from_utf8(e.id) {
                Ok(text) => {
                    if let Err(es) = &*BundleEntryId::verdict(text) {
                        errs.extend(es.iter().map(|ie| {
                            let rule = if ie.rule == rules::BIN_4 {
                                rules::OBJ_4
                            } else {
                                ie.rule
                            };
                            Error::at(
                                rule,
                                e.id_pos + ie.pos as u64,
                                format!("bundle section {}: {}", e.section, ie.message),
                            )
                        }));
                    }
                }
                Err(u) => errs.push(Error::at(
                    rules::ID_1,
                    e.id_pos + u.valid_up_to() as u64,
                    format!("bundle section {}: the ID is not ASCII text", e.section),
                )),
            }
        }
        if let Some(j) = entries[..i].iter().position(|p| p.id == e.id) {
            errs.push(Error::at(
                rules::OBJ_5,
                e.id_pos,
                format!(
                    "bundle section {} repeats the ID '{}' of section {}",
                    e.section,
                    e.id_str(),
                    entries[j].section
                ),
            ));
        }
        let is_host = e.kind() == b"host";
        let payload = e.payload(data);
        if is_host {
            hosts.push(i);
            if payload.is_some() && payload != Some(HOST_MARKER) {
                errs.push(Error::at(
                    rules::OBJ_6,
                    e.offset,
                    format!(
                        "host section {} '{}' holds {} bytes; it must hold exactly one 0x00 byte",
                        e.section,
                        e.id_str(),
                        e.size
                    ),
                ));
            }
        } else if payload == Some(HOST_MARKER) {
            errs.push(Error::at(
                rules::OBJ_7,
                e.offset,
                format!(
                    "device section {} '{}' holds exactly one 0x00 byte: every LLVM release unbundles the host object for it instead",
                    e.section,
                    e.id_str()
                ),
            ));
        }
        if e.sh_type != SHT_PROGBITS {
            errs.push(Error::at(
                rules::OBJ_8,
                e.record_pos + 4,
                format!(
                    "bundle section {} '{}' has type {}, not SHT_PROGBITS",
                    e.section,
                    e.id_str(),
                    e.sh_type
                ),
            ));
        }
        if e.flags & SHF_EXCLUDE == 0 || e.flags & (SHF_ALLOC | SHF_WRITE) != 0 {
            errs.push(Error::at(
                rules::OBJ_8,
                e.record_pos + 8,
                format!(
                    "bundle section {} '{}' has flags 0x{:x}; it needs SHF_EXCLUDE and neither SHF_ALLOC nor SHF_WRITE",
                    e.section,
                    e.id_str(),
                    e.flags
                ),
            ));
        }
    }
    match hosts.as_slice() {
        [h] => (Some(*h), errs),
        [] => {
            errs.push(Error::at(
                rules::OBJ_6,
                elf.shoff,
                if entries.is_empty() {
                    "the object has no __CLANG_OFFLOAD_BUNDLE__ sections: it is not an object-file bundle".to_string()
                } else {
                    format!(
                        "none of the {} bundle sections is a host entry",
                        entries.len()
                    )
                },
            ));
            (None, errs)
        }
        [_, rest @ ..] => {
            for &h in rest {
                errs.push(Error::at(
                    rules::OBJ_6,
                    entries[h].record_pos,
                    format!(
                        "a second host section {} '{}'",
                        entries[h].section,
                        entries[h].id_str()
                    ),
                ));
            }
            (None, errs)
        }
    }
}

/// The entries LLVM `release` lists for an object file, in section order
/// (`-list -type=o` prints their IDs one per line). Every release walks the
/// sections the same way; the error is the ELF reader's.
pub fn llvm_list(data: &[u8], release: Release) -> Result<Vec<Entry<'_>>> {
    let elf = Elf::parse(data)?;
    let mut entries = scan(&elf);
    // 19 and 22 recognise a bundle section with `identify_magic`, which
    // wants more than the bare magic: a section named exactly
    // `__CLANG_OFFLOAD_BUNDLE__` (empty ID) is skipped. 14 and 16 compare
    // the prefix and list it as an empty line.
    if release.quirks().drops_empty_object_ids {
        entries.retain(|e| !e.id.is_empty());
    }
    Ok(entries)
}

/// What `release` writes when it unbundles entry `e` of the object `data`:
/// the section contents, except that contents of exactly one 0x00 byte
/// (the host marker, whatever the entry's ID: quirk C11) stand for the
/// host object: 14 and 16 write the whole input unchanged, 19 and 22 the
/// input with every bundle section removed (OBJ-11).
pub fn llvm_payload<'a>(data: &'a [u8], e: &Entry<'a>, release: Release) -> Result<Cow<'a, [u8]>> {
    let contents = e.payload(data).ok_or_else(|| {
        Error::at(
            rules::OBJ_3,
            e.record_pos,
            format!(
                "bundle section {} '{}': contents [0x{:x}, +0x{:x}) lie outside the file of {} bytes",
                e.section,
                e.id_str(),
                e.offset,
                e.size,
                data.len()
            ),
        )
    })?;
    if contents != HOST_MARKER {
        return Ok(Cow::Borrowed(contents));
    }
    if release.ccob_versions_read().is_empty() {
        Ok(Cow::Borrowed(data))
    } else {
        Ok(Cow::Owned(strip(data)?))
    }
}

/// The host object of a fat object: `data` without any bundle section
/// (`llvm-objcopy --regex --remove-section=__CLANG_OFFLOAD_BUNDLE__.*`).
pub fn strip(data: &[u8]) -> Result<Vec<u8>> {
    elf::remove_sections(data, |s| is_bundle_section(s.name))
}

/// Write an object-file bundle as `release` does (OBJ-10): the host input
/// (an ELF object) plus one section per target, in `targets` order, named
/// with the ID the release writes, holding the target's input, or the
/// host marker for the host target. `inputs[i]` belongs to `targets[i]`.
pub fn bundle(release: Release, targets: &[&str], inputs: &[&[u8]]) -> Result<Vec<u8>> {
    if targets.len() != inputs.len() || targets.is_empty() {
        return Err(Error::rule(
            rules::CLI_1,
            format!(
                "{} targets and {} inputs: bundling needs one input per target",
                targets.len(),
                inputs.len()
            ),
        ));
    }
    let host_of = |t: &str| {
        release
            .target_info(t)
            .map_or_else(|| t.starts_with("host-"), |i| i.kind == "host")
    };
    let hosts: Vec<usize> = (0..targets.len())
        .filter(|&i| host_of(targets[i]))
        .collect();
    let [host] = hosts.as_slice() else {
        return Err(Error::rule(
            rules::OBJ_6,
            format!(
                "an object-file bundle needs exactly one host target, got {} (with no host target and an object file as the first input, LLVM 14-22 die of SIGSEGV)",
                hosts.len()
            ),
        ));
    };
    let host_obj = inputs[*host];
    // A host input that already has bundle sections (what 13-16 return
    // when unbundling the host of a fat object) is written as every
    // release writes it: llvm-objcopy adds the new sections after the old
    // ones of the same names. The result breaks OBJ-5 and OBJ-6; the
    // strict reader says so.
    Elf::parse(host_obj)?;
    let mut ids = Vec::with_capacity(targets.len());
    for t in targets {
        let id = release
            .written_id(t)
            .map_err(|m| Error::rule(rules::ID_1, format!("target '{t}': {m}")))?;
        if ids.contains(&id) {
            return Err(Error::rule(
                rules::OBJ_5,
                format!("two targets are written as the ID '{id}' by LLVM {release}"),
            ));
        }
        ids.push(id);
    }
    let names: Vec<String> = ids
        .iter()
        .map(|id| format!("{SECTION_PREFIX}{id}"))
        .collect();
    let mut new: Vec<(&str, &[u8], u64)> = Vec::with_capacity(targets.len());
    for (i, name) in names.iter().enumerate() {
        let contents = if i == *host { HOST_MARKER } else { inputs[i] };
        if i != *host && contents == HOST_MARKER {
            return Err(Error::rule(
                rules::OBJ_7,
                format!(
                    "the input for '{}' is exactly one 0x00 byte: every LLVM release would unbundle the host object for it",
                    targets[i]
                ),
            ));
        }
        new.push((name, contents, SHF_EXCLUDE));
    }
    // The release's own llvm-objcopy (13: headers in file order; 13-16:
    // .llvm_addrsig without its link).
    elf::add_sections_as(host_obj, &new, elf::Objcopy::of_llvm(release.major()))
}
