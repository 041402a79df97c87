//! The memory budget (CLI-6) as a value: how many bytes of decoded data a
//! reader may hold beyond the outputs it writes. The spec core takes it as
//! an argument and keeps no setting of its own: each front end makes one
//! from its option (`--max-memory`, `OFFLOAD_KIT_MAX_MEMORY`, Python's
//! `max_memory=`) and hands it down to every reader it calls.
//!
//! ```
//! use offload_kit_format::limits::Budget;
//!
//! let b = Budget::new(1 << 20);
//! assert!(b.exceeded((1 << 20) + 1) && !b.exceeded(1 << 20));
//! // 1,000 listed entries are about 4 MB to hold: past a 1 MiB budget.
//! assert_eq!(b.hold_entries(1_000, 24).unwrap_err().rule_id(), Some("CLI-6"));
//! assert!(Budget::default().hold_entries(1_000, 24).is_ok());
//! ```

use crate::error::Error;
use crate::rules;

/// A memory budget in bytes (CLI-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    bytes: u64,
}

impl Budget {
    /// The default budget: 256 MiB.
    pub const DEFAULT: u64 = 256 << 20;

    /// What one listed entry costs to hold (its ID, positions, a share of
    /// the errors and the JSON a front end makes of it), about 4 KiB.
    pub const ENTRY_COST: u64 = 4096;

    /// A budget of `bytes`, at least 1 MiB.
    pub fn new(bytes: u64) -> Budget {
        Budget {
            bytes: bytes.max(1 << 20),
        }
    }

    /// The budget in bytes.
    pub fn bytes(self) -> u64 {
        self.bytes
    }

    /// What a zstd decoder holds besides its output: the window of the
    /// frames LLVM writes (level 3 with long-distance matching: 2^27 bytes).
    pub const ZSTD_WINDOW: u64 = 128 << 20;

    /// What output decoded by zstd may hold: the budget less the decoder's
    /// window ([`Budget::ZSTD_WINDOW`]).
    pub fn zstd_room(self) -> u64 {
        self.bytes.saturating_sub(Self::ZSTD_WINDOW)
    }

    /// Whether holding `bytes` of output decoded by zstd, with the
    /// decoder's window, passes the budget.
    pub fn exceeded_by_zstd(self, bytes: u64) -> bool {
        bytes > self.zstd_room()
    }

    /// `1048576`, `512K`, `256M`, `4G` (KiB, MiB, GiB) as a budget (at
    /// least 1 MiB); `None` when the text is not a size ([`parse_size`]).
    pub fn parse(text: &str) -> Option<Budget> {
        parse_size(text).map(Budget::new)
    }

    /// Whether holding `bytes` would pass the budget.
    pub fn exceeded(self, bytes: u64) -> bool {
        bytes > self.bytes
    }

    /// `Ok` when `entries` listed entries fit the budget; else CLI-6 at
    /// absolute offset `at` (where the count that claims them is).
    pub fn hold_entries(self, entries: usize, at: u64) -> Result<(), Error> {
        let cost = (entries as u64).saturating_mul(Self::ENTRY_COST);
        if self.exceeded(cost) {
            return Err(Error::at(
                rules::CLI_6,
                at,
                format!(
                    "{entries} entries: holding them takes about {cost} bytes, past the memory budget of {} bytes (--max-memory)",
                    self.bytes
                ),
            ));
        }
        Ok(())
    }
}

/// `1048576`, `512K`, `256M`, `4G` (KiB, MiB, GiB) as bytes; `None` when
/// the text is not a size, or its bytes pass 2^64.
///
/// ```
/// use offload_kit_format::limits::parse_size;
/// assert_eq!(parse_size("512K"), Some(512 << 10));
/// assert_eq!(parse_size("0"), Some(0));
/// assert_eq!(parse_size("1.5G"), None);
/// ```
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, shift) = match t.as_bytes().last()? {
        b'K' | b'k' => (&t[..t.len() - 1], 10),
        b'M' | b'm' => (&t[..t.len() - 1], 20),
        b'G' | b'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(Budget::DEFAULT)
    }
}
