//! A guard against SIGBUS: reading a mapped file that another process
//! truncated (Pi rewrites a whole file on migration and `/fork`) faults on
//! the pages past the new end, and the default action kills the process.
//!
//! Every mapping is registered here while it lives. A SIGBUS handler looks
//! the faulting address up: inside a registered mapping, it maps a page of
//! zeros over the faulting page (`mmap` with `MAP_FIXED`, which is
//! async-signal-safe), marks the mapping as truncated and returns, so the
//! read goes on and sees zeros; the build then drops what it parsed from
//! that file and says so. A fault anywhere else is not ours: the default
//! action is restored and the signal raised again.
//!
//! Registration is lock-free (the handler may run on any thread at any
//! moment): a fixed table of slots with atomic bounds.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

/// Mappings that can be guarded at once: one per file being read, so a
/// few per worker thread.
const SLOTS: usize = 256;

struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    truncated: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    truncated: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
static INSTALL: Once = Once::new();

/// A registered mapping; unregistered on drop.
pub struct Guard {
    slot: Option<usize>,
}

impl Guard {
    /// Guard `len` bytes mapped at `ptr`. When the table is full the
    /// mapping is simply not guarded (it reads as before).
    pub fn register(ptr: *const u8, len: usize) -> Guard {
        install();
        let start = ptr as usize;
        for (i, slot) in TABLE.iter().enumerate() {
            // Claim a free slot by setting its start from 0.
            if slot
                .start
                .compare_exchange(0, start, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                slot.truncated.store(false, Ordering::Release);
                slot.end.store(start + len, Ordering::Release);
                return Guard { slot: Some(i) };
            }
        }
        Guard { slot: None }
    }

    /// Whether a read of this mapping faulted because the file shrank.
    pub fn truncated(&self) -> bool {
        self.slot
            .is_some_and(|i| TABLE[i].truncated.load(Ordering::Acquire))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            TABLE[i].end.store(0, Ordering::Release);
            TABLE[i].start.store(0, Ordering::Release);
        }
    }
}

#[cfg(unix)]
fn install() {
    INSTALL.call_once(|| {
        // SAFETY: installing a handler with SA_SIGINFO; the handler only
        // reads atomics and calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                on_sigbus;
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

#[cfg(not(unix))]
fn install() {
    INSTALL.call_once(|| {});
}

#[cfg(unix)]
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in TABLE.iter() {
        let start = slot.start.load(Ordering::Acquire);
        let end = slot.end.load(Ordering::Acquire);
        if start != 0 && start <= addr && addr < end {
            // SAFETY: sysconf and mmap are async-signal-safe; the page lies
            // inside a live mapping of ours, which MAP_FIXED replaces with
            // zeros, so the faulting read can complete.
            unsafe {
                let page = libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize;
                let at = addr & !(page - 1);
                let p = libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                );
                if p != libc::MAP_FAILED {
                    slot.truncated.store(true, Ordering::Release);
                    return;
                }
            }
        }
    }
    // Not a mapping of ours: die as we would have.
    // SAFETY: restoring the default action and re-raising is the standard
    // way out of a handler that cannot handle the signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
