//! Host formats the offload containers live in or beside: ELF objects (read
//! and write), GNU `ar` archives, the archive symbol tables LLVM writes for
//! ELF and bitcode members, and the iteration orders of LLVM's hash maps that
//! decide the order of listings and string tables.
//!
//! Nothing here knows a container: `bundle`, `offload_binary` and the
//! operations build on these modules, never the other way round.
//!
//! # Example
//!
//! A GNU archive of an ELF and a bitcode member, and each member recognised.
//!
//! ```
//! use offload_kit_format::host::ar;
//! use offload_kit_format::host::elf::{detect, ObjectFormat};
//!
//! let archive = ar::write_gnu(&[("a.o", b"\x7fELF\x02\x01\x01"), ("b.bc", b"BC\xc0\xde")]);
//! assert_eq!(detect(&archive), ObjectFormat::Archive);
//! let kinds: Vec<ObjectFormat> = ar::members(&archive, 0)
//!     .unwrap()
//!     .iter()
//!     .map(|m| detect(&archive[m.data_offset as usize..][..m.size as usize]))
//!     .collect();
//! assert_eq!(kinds, [ObjectFormat::Elf, ObjectFormat::Bitcode]);
//! ```

pub mod ar;
pub mod coff;
pub mod elf;
pub mod strtab;
pub mod symtab;
