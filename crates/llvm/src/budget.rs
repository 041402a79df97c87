//! The memory budget (CLI-6): how many bytes of decoded data a command may
//! hold beyond the outputs it writes. Readers that must hold decoded data
//! whole (an inflated offload binary, a compressed bundle a release model
//! reads in one piece) stop at the budget with a CLI-6 error instead of
//! growing further; no buffer is ever sized from a claim in the input.
//!
//! The budget is process-wide: the CLI sets it once from `--max-memory` or
//! `OFFLOAD_KIT_MAX_MEMORY` before reading anything.
//!
//! ```
//! use offload_kit_llvm::budget;
//! assert_eq!(budget::DEFAULT, 256 << 20);
//! assert!(budget::get() >= 1 << 20);
//! assert!(budget::exceeded(budget::get() + 1));
//! assert!(!budget::exceeded(budget::get()));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

pub use offload_kit_format::limits::Budget;

/// The default budget: 256 MiB.
pub const DEFAULT: u64 = Budget::DEFAULT;

static BUDGET: AtomicU64 = AtomicU64::new(DEFAULT);

/// The budget in bytes.
pub fn get() -> u64 {
    BUDGET.load(Ordering::Relaxed)
}

/// Set the budget (at least 1 MiB: the windows and buffers of the streaming
/// readers need that much whatever the budget).
pub fn set(bytes: u64) {
    BUDGET.store(Budget::new(bytes).bytes(), Ordering::Relaxed);
}

/// Whether holding `bytes` of decoded data breaks the budget.
pub fn exceeded(bytes: u64) -> bool {
    bytes > get()
}

/// What a zstd decoder holds besides its output: the window of the frames
/// LLVM writes (level 3 with long-distance matching: 2^27 bytes).
pub const ZSTD_WINDOW: u64 = 128 << 20;

/// What output decoded by zstd may hold: the budget less the decoder's
/// window ([`ZSTD_WINDOW`]).
pub fn zstd_room() -> u64 {
    get().saturating_sub(ZSTD_WINDOW)
}

/// Whether holding `bytes` of output decoded by zstd, with the decoder's
/// window, breaks the budget.
pub fn exceeded_by_zstd(bytes: u64) -> bool {
    bytes > zstd_room()
}

/// What one listed entry costs to hold ([`Budget::ENTRY_COST`]).
pub const ENTRY_COST: u64 = Budget::ENTRY_COST;

/// The process-wide budget as the value the spec core takes.
pub fn current() -> Budget {
    Budget::new(get())
}

/// `Ok` when `entries` listed entries fit the budget; else CLI-6 at `at`
/// ([`Budget::hold_entries`] of [`current`]).
pub fn hold_entries(entries: usize, at: u64) -> Result<(), crate::Error> {
    current().hold_entries(entries, at)
}

/// The budget from `OFFLOAD_KIT_MAX_MEMORY` (bytes, or with a `K`, `M` or
/// `G` suffix for KiB, MiB, GiB), if set and well-formed.
pub fn from_env() -> Option<u64> {
    parse(&std::env::var("OFFLOAD_KIT_MAX_MEMORY").ok()?)
}

/// `1048576`, `512K`, `256M`, `4G` as bytes.
pub fn parse(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, shift) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 10),
        b'M' | b'm' => (&t[..t.len() - 1], 20),
        b'G' | b'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}
