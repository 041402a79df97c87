//! Mapped inputs without SIGBUS, for a front end that must survive a file
//! cut short under it (Python's interpreter; the CLI exits with a message
//! instead). A page of a mapped file that another process truncates raises
//! SIGBUS when read, which would kill the process. While a mapping is
//! registered here, a handler puts a page of zeros where the vanished page
//! was and marks the mapping: the read goes on, and the caller, asking
//! [`Guarded::faulted`] after it is done with the bytes, refuses what it
//! computed. Faults outside these mappings go to the handler that was there
//! before (Python's `faulthandler`, or the default action).
//!
//! ```
//! let path = std::env::temp_dir().join(format!("ok-guarded-doc-{}", std::process::id()));
//! std::fs::write(&path, b"__CLANG_OFFLOAD_BUNDLE__").unwrap();
//! let (file, _) = offload_kit_io::input::open_regular(&path).unwrap();
//! let map = offload_kit_io::guarded::Guarded::map(&file).unwrap();
//! assert!(map.bytes().starts_with(b"__CLANG") && !map.faulted());
//! # std::fs::remove_file(&path).unwrap();
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// How many mappings can be guarded at once; more are refused.
const SLOTS: usize = 1024;
static START: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static END: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static FAULTED: [AtomicBool; SLOTS] = [const { AtomicBool::new(false) }; SLOTS];
/// The action before ours, set once with ours.
static PREVIOUS: OnceLock<libc::sigaction> = OnceLock::new();
/// The page size, read once before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// A read-only map of a whole file, guarded while it lives.
pub struct Guarded {
    map: memmap2::Mmap,
    slot: usize,
}

impl Guarded {
    /// Map `file` and guard the mapping.
    pub fn map(file: &std::fs::File) -> Result<Guarded, String> {
        install();
        // SAFETY: a read-only private mapping of a file we opened; a
        // page that vanishes under it is replaced by zeros (see the
        // module) before anything reads through it.
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| e.to_string())?;
        let start = map.as_ptr() as usize;
        let slot = (0..SLOTS)
            .find(|&i| {
                START[i]
                    .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            })
            .ok_or_else(|| format!("more than {SLOTS} files are open"))?;
        FAULTED[slot].store(false, Ordering::Release);
        END[slot].store(start + map.len(), Ordering::Release);
        START[slot].store(start, Ordering::Release);
        Ok(Guarded { map, slot })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether a page of the file vanished while it was mapped.
    pub fn faulted(&self) -> bool {
        FAULTED[self.slot].load(Ordering::Acquire)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // Unregistered before the map is unmapped (fields drop after).
        END[self.slot].store(0, Ordering::Release);
        START[self.slot].store(0, Ordering::Release);
    }
}

fn install() {
    PREVIOUS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        #[allow(unsafe_code)]
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(p) = usize::try_from(page) {
            if p.is_power_of_two() {
                PAGE.store(p, Ordering::Release);
            }
        }
        // SAFETY: a zeroed sigaction is valid (no flags, empty mask);
        // the handler calls only mmap(2), which on Linux is a plain
        // system call, and atomics.
        #[allow(unsafe_code)]
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as libc::sighandler_t;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGBUS, &sa, &mut old);
            old
        }
    });
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO.
    #[allow(unsafe_code)]
    let addr = unsafe { (*info).si_addr() } as usize;
    for i in 0..SLOTS {
        let (s, e) = (
            START[i].load(Ordering::Acquire),
            END[i].load(Ordering::Acquire),
        );
        if s != 0 && s != usize::MAX && (s..e).contains(&addr) {
            let page = PAGE.load(Ordering::Acquire);
            let at = addr & !(page - 1);
            // SAFETY: the page lies inside our own read-only mapping;
            // replacing it with an anonymous page of zeros keeps the
            // address range valid for the reader.
            #[allow(unsafe_code)]
            let r = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if r != libc::MAP_FAILED {
                FAULTED[i].store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: the previous action.
    let Some(old) = PREVIOUS.get() else { return };
    // SAFETY: calling or restoring the action that was installed before
    // ours, as the kernel would have.
    #[allow(unsafe_code)]
    unsafe {
        if old.sa_sigaction == libc::SIG_DFL || old.sa_sigaction == libc::SIG_IGN {
            // Back to the default; the faulting read runs again and the
            // process ends as it would have without us.
            libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut());
        } else if old.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(old.sa_sigaction);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(old.sa_sigaction);
            f(sig);
        }
    }
}
