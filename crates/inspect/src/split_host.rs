//! Split hosts (HIPK): a host ELF whose `.hip_fatbin` was moved into ROCm
//! kpack archives, recognised once here so that every front end (the CLI's
//! `inspect`, `check`, `extract` and `convert`, Python) sees the same host.
//!
//! ```
//! // A plain file is no split host; a host is one when it carries a kpack
//! // reference (`.rocm_kpack_ref`), damaged or not.
//! assert!(offload_kit_inspect::split_host::split_host(b"not an ELF").is_none());
//! ```

use offload_kit_format::host::elf::Elf;
use offload_kit_format::kpack::{self, HostRef};
use offload_kit_format::{rules, Error};

/// A split host's kpack reference and the code-object indices its
/// wrappers name (the runtime's `<kernel_name>#<index>`).
pub type SplitHost = (HostRef, Vec<u64>);

/// `None` when `data` is no split host (no ELF, or no kpack reference);
/// else its reference and wrapper indices, or why they cannot be read
/// (HIPK-1).
pub fn split_host(data: &[u8]) -> Option<Result<SplitHost, Vec<Error>>> {
    let elf = Elf::parse(data).ok()?;
    let r = offload_kit_llvm::bundle::fatbin::kpack_ref(&elf, data)?;
    let wrapper = elf
        .section_by_name(kpack::WRAPPER_SECTION)
        .and_then(|s| Some((s.data(data)?, s.offset)));
    Some(match (r, wrapper) {
        (Err(e), _) => Err(vec![e]),
        (Ok(r), Some((w, at))) => {
            let indices: Vec<u64> = (w.chunks(24))
                .filter(|c| c.starts_with(kpack::HOST_MAGIC))
                .filter_map(kpack::wrapper_index)
                .collect();
            if indices.is_empty() {
                Err(vec![Error::at(
                    rules::HIPK_1,
                    at,
                    format!(
                        "the {} wrapper of {} bytes has no code-object index",
                        kpack::WRAPPER_SECTION,
                        w.len()
                    ),
                )])
            } else {
                Ok((r, indices))
            }
        }
        (Ok(_), None) => Err(vec![Error::at(rules::HIPK_1, 0, "no wrapper section")]),
    })
}
