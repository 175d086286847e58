//! A guard against SIGBUS: reading a mapped file that another process
//! truncated (Pi rewrites a whole file on migration and `/fork`) faults on
//! the pages past the new end, and the default action kills the process.
//!
//! Every mapping is registered here while it lives. A SIGBUS handler looks
//! the faulting address up: inside a registered mapping, it maps a page of
//! zeros over the faulting page (`mmap` with `MAP_FIXED`, which is
//! async-signal-safe), marks the mapping as truncated and returns, so the
//! read goes on and sees zeros; the build then drops what it parsed from
//! that file and says so. A fault anywhere else is not ours: it goes to
//! the handler that was installed before ours (Rust's own, which reports a
//! stack overflow on a guard page, or a host program's), or, when there
//! was none, the default action is restored and the signal raised again.
//!
//! Registration is lock-free (the handler may run on any thread at any
//! moment): a fixed table of slots with atomic bounds.
//!
//! # Safety of the handler
//!
//! A signal handler may only call async-signal-safe functions. This one
//! reads atomics, and calls `sysconf`, `mmap`, `signal` and `raise`, which
//! POSIX lists as async-signal-safe (`mmap` since POSIX.1-2008 TC2; on
//! Linux it is a plain system call that takes no lock of user space). The
//! `MAP_FIXED` mapping only ever replaces a page that lies inside a mapping
//! this process made of a session file and still holds (its slot is set
//! until the mapping is dropped, and the slot is cleared before the unmap),
//! so no memory of anything else is touched.

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

/// The SIGBUS action in place before ours, for faults that are not ours.
/// Written once, before our handler is installed, and only read after.
#[cfg(unix)]
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

/// A registered mapping; unregistered on drop.
pub(crate) struct Guard {
    slot: Option<usize>,
}

impl Guard {
    /// Guard `len` bytes mapped at `ptr`. When the table is full the
    /// mapping is simply not guarded (it reads as before).
    pub(crate) fn register(ptr: *const u8, len: usize) -> Guard {
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
    pub(crate) fn truncated(&self) -> bool {
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
        // SAFETY: reading the current action, then installing a handler
        // with SA_SIGINFO; the handler only reads atomics and calls
        // async-signal-safe functions (see the module docs).
        unsafe {
            let mut previous: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut previous) != 0 {
                return;
            }
            let _ = PREVIOUS.set(previous);
            let mut action: libc::sigaction = std::mem::zeroed();
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                on_sigbus;
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// No guard without SIGBUS: Windows does not let another process cut a
/// file while a view of it is mapped (its truncation fails instead), so a
/// mapping there never loses its pages.
#[cfg(not(unix))]
fn install() {
    INSTALL.call_once(|| {});
}

#[cfg(unix)]
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
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
    // Not a mapping of ours: whoever handled it before us does.
    if let Some(previous) = PREVIOUS.get() {
        let h = previous.sa_sigaction;
        if h != libc::SIG_DFL && h != libc::SIG_IGN {
            // SAFETY: `h` is the handler the process had installed, called
            // the way its flags say it expects to be called.
            unsafe {
                if previous.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(h);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
                    f(sig);
                }
            }
            return;
        }
    }
    // No handler before ours: die as we would have.
    // SAFETY: restoring the default action and re-raising is the standard
    // way out of a handler that cannot handle the signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    static CHAINED: AtomicBool = AtomicBool::new(false);

    extern "C" fn previous_handler(_sig: libc::c_int) {
        CHAINED.store(true, Ordering::SeqCst);
    }

    /// A SIGBUS that is not about one of our mappings reaches the handler
    /// installed before ours. Run in a child process of this test binary:
    /// the guard installs itself once per process, and the parent's may be
    /// installed already.
    #[test]
    fn a_fault_that_is_not_ours_goes_to_the_previous_handler() {
        if std::env::var_os("PI_INDEX_GUARD_CHILD").is_some() {
            // SAFETY: installing a plain handler that stores an atomic.
            unsafe {
                let h: extern "C" fn(libc::c_int) = previous_handler;
                libc::signal(libc::SIGBUS, h as libc::sighandler_t);
            }
            let bytes = [1u8; 64];
            let _guard = super::Guard::register(bytes.as_ptr(), bytes.len());
            // SAFETY: raising a signal whose handlers are both installed.
            unsafe {
                libc::raise(libc::SIGBUS);
            }
            assert!(CHAINED.load(Ordering::SeqCst), "the previous handler ran");
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "source::guard::tests::a_fault_that_is_not_ours_goes_to_the_previous_handler",
                "--nocapture",
            ])
            .env("PI_INDEX_GUARD_CHILD", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "child: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
    }
}
