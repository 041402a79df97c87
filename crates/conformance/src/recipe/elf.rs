//! ELF input recipes: a host object with sections appended (bundle
//! sections, `.hip_fatbin`), then section header fields overridden.

use super::{apply_patches, put, IdSpec, InputSpec, Patch};
use crate::bundle::object;
use crate::host::elf::{self, Elf};
use crate::profile::Release;
use serde::{Deserialize, Serialize};

/// An ELF recipe (object-bundle.md): the host object with sections
/// appended in order (as `llvm-objcopy --add-section` does, through
/// offload-kit's ELF writer), then section fields overridden, cut, patched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfRecipe {
    /// The host object (an ELF file).
    pub host: Box<InputSpec>,
    /// Sections appended after the host's, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<ElfSectionRecipe>,
    /// Cut the file to this many bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate: Option<u64>,
    /// Byte patches at absolute positions, applied last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patch: Vec<Patch>,
}

/// One appended section of an [`ElfRecipe`]: named `name`, or
/// `__CLANG_OFFLOAD_BUNDLE__` + the `bundle` ID.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElfSectionRecipe {
    /// The section name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A bundle section for this entry ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<IdSpec>,
    /// The contents (default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<InputSpec>>,
    /// `sh_flags` (default `SHF_EXCLUDE` for a bundle section, `SHF_ALLOC` otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<u64>,
    /// `sh_type` (default `SHT_PROGBITS`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub sh_type: Option<u32>,
    /// `sh_addralign` (default 1); the section is laid out at a multiple of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
    /// Override of `sh_size`, after layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Override of `sh_name`, after layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sh_name: Option<u32>,
}

impl ElfRecipe {
    /// Build the file, bundle IDs spelled for `release`.
    pub fn build(&self, release: Option<Release>) -> Result<Vec<u8>, String> {
        let host = self
            .host
            .build(release)?
            .ok_or("the host object cannot be a missing file")?;
        let mut names = Vec::new();
        let mut datas = Vec::new();
        let mut flags = Vec::new();
        for s in &self.sections {
            let name = match (&s.name, &s.bundle) {
                (Some(n), None) => n.clone(),
                (None, Some(id)) => format!(
                    "{}{}",
                    object::SECTION_PREFIX,
                    String::from_utf8(id.resolve(release)?)
                        .map_err(|_| "a section name must be UTF-8")?
                ),
                _ => return Err("a section has exactly one of name and bundle".into()),
            };
            datas.push(match &s.data {
                Some(d) => d.build(release)?.ok_or("section data cannot be missing")?,
                None => Vec::new(),
            });
            flags.push(s.flags.unwrap_or(if s.bundle.is_some() {
                elf::SHF_EXCLUDE
            } else {
                elf::SHF_ALLOC
            }));
            names.push(name);
        }
        let new: Vec<(&str, &[u8], u64)> = names
            .iter()
            .zip(&datas)
            .zip(&flags)
            .map(|((n, d), f)| (n.as_str(), d.as_slice(), *f))
            .collect();
        let mut out = if new.is_empty() {
            host
        } else {
            elf::add_sections(&host, &new).map_err(|e| e.to_string())?
        };
        // Section-header fields: sh_type and sh_addralign first (the file
        // is laid out again when an alignment changes), then sh_size and
        // sh_name, which no layout may see.
        let n = self.sections.len();
        let patch_headers = |out: &mut Vec<u8>, what: &HeaderWrites<'_>| -> Result<bool, String> {
            let e = Elf::parse(out).map_err(|e| e.to_string())?;
            let first = e.sections.len() - n;
            let mut writes = Vec::new();
            for (i, s) in self.sections.iter().enumerate() {
                let hdr = e.sections[first + i].header_pos;
                for (field, v, width) in what(s) {
                    writes.push((hdr + field, v, width, e.encoding.big_endian));
                }
            }
            let changed = !writes.is_empty();
            for (at, v, width, be) in writes {
                let bytes = if be {
                    v.to_be_bytes()[8 - width..].to_vec()
                } else {
                    v.to_le_bytes()[..width].to_vec()
                };
                put(out, at, &bytes);
            }
            Ok(changed)
        };
        if n > 0 {
            let is64 = Elf::parse(&out).map_err(|e| e.to_string())?.encoding.is64;
            let (w, align_at, size_at) = if is64 { (8, 48, 32) } else { (4, 32, 20) };
            let relayout = patch_headers(&mut out, &|s| {
                let mut v = Vec::new();
                if let Some(t) = s.sh_type {
                    v.push((4, u64::from(t), 4));
                }
                if let Some(a) = s.align {
                    v.push((align_at, a, w));
                }
                v
            })?;
            if relayout && self.sections.iter().any(|s| s.align.is_some()) {
                out = elf::add_sections(&out, &[]).map_err(|e| e.to_string())?;
            }
            patch_headers(&mut out, &|s| {
                let mut v = Vec::new();
                if let Some(x) = s.size {
                    v.push((size_at, x, w));
                }
                if let Some(x) = s.sh_name {
                    v.push((0, u64::from(x), 4));
                }
                v
            })?;
        }
        if let Some(t) = self.truncate {
            out.truncate(t as usize);
        }
        apply_patches(&mut out, &self.patch)?;
        Ok(out)
    }
}

/// For each appended section, the header fields to write: `(offset in the
/// section header, value, width in bytes)`.
type HeaderWrites<'a> = dyn Fn(&ElfSectionRecipe) -> Vec<(u64, u64, usize)> + 'a;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode_base64;

    #[test]
    fn elf_recipe_appends_sections() {
        let host = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../conformance/fixtures/host-x86_64.o"
        ))
        .unwrap();
        let r = ElfRecipe {
            host: Box::new(InputSpec::Base64(encode_base64(&host))),
            sections: vec![
                ElfSectionRecipe {
                    name: None,
                    bundle: Some(IdSpec::Written {
                        written: "host-x86_64-unknown-linux-gnu".into(),
                    }),
                    data: Some(Box::new(InputSpec::Hex("00".into()))),
                    flags: None,
                    sh_type: None,
                    align: None,
                    size: None,
                    sh_name: None,
                },
                ElfSectionRecipe {
                    name: Some(".hip_fatbin".into()),
                    bundle: None,
                    data: Some(Box::new(InputSpec::Utf8("FATBIN".into()))),
                    flags: None,
                    sh_type: Some(elf::SHT_NOBITS),
                    align: Some(4096),
                    size: Some(99),
                    sh_name: None,
                },
            ],
            truncate: None,
            patch: vec![],
        };
        let b = r.build(Some(Release::L19)).unwrap();
        let e = Elf::parse(&b).unwrap();
        let n = e.sections.len();
        let (bun, fat) = (&e.sections[n - 2], &e.sections[n - 1]);
        assert_eq!(
            bun.name,
            b"__CLANG_OFFLOAD_BUNDLE__host-x86_64-unknown-linux-gnu-"
        );
        assert_eq!(
            (bun.sh_type, bun.flags, bun.align),
            (elf::SHT_PROGBITS, elf::SHF_EXCLUDE, 1)
        );
        assert_eq!(bun.data(&b), Some(&[0u8][..]));
        assert_eq!(fat.name, b".hip_fatbin");
        assert_eq!(
            (fat.sh_type, fat.flags, fat.align, fat.size),
            (elf::SHT_NOBITS, elf::SHF_ALLOC, 4096, 99)
        );
        assert_eq!(fat.offset % 4096, 0);
    }
}
