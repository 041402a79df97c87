//! The string tables LLVM writes: `StringTableBuilder(StringTableBuilder::ELF)`
//! finalized with optimization (tail merging), as every release's offload
//! binary writer (spec/offload-binary.md, OB-16) and `llvm-objcopy`
//! (spec/object-bundle.md, OBJ-10) lay them out.
//!
//! * Offset 0 holds a NUL; the empty string is at offset 0.
//! * The distinct strings are sorted by their reversed bytes, descending
//!   (`multikeySort`); a string that is a suffix of another sorts after it.
//! * Each string in that order is appended NUL-terminated, unless the
//!   string appended last ends with it: then it points into that string.

//! # Example
//!
//! ```
//! use offload_kit_format::host::strtab::StrTab;
//!
//! let t = StrTab::build([&b".text"[..], b".rela.text", b"host_fn"]);
//! assert_eq!(t.bytes, b"\0.rela.text\0host_fn\0");
//! assert_eq!(t.offset(b".text"), Some(6)); // the tail of ".rela.text"
//! ```

use std::collections::HashMap;

/// A finished string table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrTab {
    /// The table's bytes, starting with a NUL.
    pub bytes: Vec<u8>,
    offsets: HashMap<Vec<u8>, u64>,
}

impl StrTab {
    /// Build the table for `strings` (repeats are merged).
    pub fn build<'s>(strings: impl IntoIterator<Item = &'s [u8]>) -> StrTab {
        let mut distinct: Vec<&[u8]> = strings.into_iter().collect();
        distinct.sort_unstable();
        distinct.dedup();
        // Descending by reversed bytes; a proper suffix sorts after the
        // longer string (LLVM's "ran out of characters" is -1, the lowest).
        distinct.sort_unstable_by(|a, b| b.iter().rev().cmp(a.iter().rev()));
        let mut offsets = HashMap::with_capacity(distinct.len() + 1);
        let mut size: u64 = 1;
        let mut previous: &[u8] = &[];
        let mut placed: Vec<(&[u8], u64)> = Vec::with_capacity(distinct.len());
        for s in distinct {
            let len = s.len() as u64;
            let at = if previous.ends_with(s) {
                size - len - 1
            } else {
                let at = size;
                size += len + 1;
                previous = s;
                placed.push((s, at));
                at
            };
            offsets.insert(s.to_vec(), at);
        }
        // `finalize` maps the empty string to the leading NUL.
        offsets.insert(Vec::new(), 0);
        let mut bytes = vec![0u8; size as usize];
        for (s, at) in placed {
            let at = at as usize;
            bytes[at..at + s.len()].copy_from_slice(s);
        }
        StrTab { bytes, offsets }
    }

    /// The offset of `s` within the table (`None` if it was not added).
    pub fn offset(&self, s: &[u8]) -> Option<u64> {
        self.offsets.get(s).copied()
    }

    /// Size of the table in bytes.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether the table holds only its leading NUL.
    pub fn is_empty(&self) -> bool {
        self.bytes.len() <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_layout() {
        // llvm-offload-binary 22 writes "\0arch\0triple\0nvptx64-nvidia-cuda\0sm_70\0" for sm_70.
        let t = StrTab::build([&b"arch"[..], b"sm_70", b"triple", b"nvptx64-nvidia-cuda"]);
        assert_eq!(t.bytes, b"\0arch\0triple\0nvptx64-nvidia-cuda\0sm_70\0");
        assert_eq!(t.offset(b"arch"), Some(1));
        assert_eq!(t.offset(b"sm_70"), Some(33));
        assert_eq!(t.offset(b""), Some(0));
    }

    #[test]
    fn tail_merge() {
        let t = StrTab::build([&b"cuda"[..], b"nvptx64-nvidia-cuda", b"m_70", b"sm_70", b""]);
        assert_eq!(t.bytes, b"\0nvptx64-nvidia-cuda\0sm_70\0");
        assert_eq!(t.offset(b"cuda"), Some(16));
        assert_eq!(t.offset(b"m_70"), Some(22));
        assert_eq!(t.offset(b""), Some(0));
    }
}
