//! The memory budget (CLI-6): how many bytes of decoded data a command may
//! hold beyond the outputs it writes. Readers that must hold decoded data
//! whole (an inflated offload binary, a compressed bundle a release model
//! reads in one piece) stop at the budget with a CLI-6 error instead of
//! growing further; no buffer is ever sized from a claim in the input.
//!
//! The budget is a value ([`Budget`]): each front end makes one from its
//! option and passes it to the readers it calls; nothing here is a setting
//! of the process.
//!
//! ```
//! use offload_kit_llvm::budget::{self, Budget};
//! assert_eq!(Budget::default().bytes(), budget::DEFAULT);
//! assert_eq!(Budget::parse("512M").map(Budget::bytes), Some(512 << 20));
//! assert!(Budget::default().exceeded(budget::DEFAULT + 1));
//! ```

pub use offload_kit_format::limits::Budget;

/// The default budget: 256 MiB.
pub const DEFAULT: u64 = Budget::DEFAULT;

/// The budget `OFFLOAD_KIT_MAX_MEMORY` names (bytes, or with a `K`, `M` or
/// `G` suffix for KiB, MiB, GiB), if it is set and well-formed.
pub fn from_env() -> Option<Budget> {
    Budget::parse(&std::env::var("OFFLOAD_KIT_MAX_MEMORY").ok()?)
}
