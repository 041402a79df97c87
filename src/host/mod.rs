//! Host formats the offload containers live in or beside: ELF objects (read
//! and write), GNU `ar` archives, the archive symbol tables LLVM writes for
//! ELF and bitcode members, and the iteration orders of LLVM's hash maps that
//! decide the order of listings and string tables.
//!
//! Nothing here knows a container: `bundle`, `offload_binary` and the
//! operations build on these modules, never the other way round.

pub mod ar;
pub mod elf;
pub mod hash_order;
pub mod symtab;
