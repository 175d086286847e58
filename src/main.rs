//! The `pi-index` command line: parse arguments, call the library, map
//! errors to exit codes (0 success, 1 nothing found, 2 error).

mod cli;

fn main() -> std::process::ExitCode {
    fixed_mmap_threshold();
    cli::run()
}

/// Keep glibc's malloc from raising its mmap threshold. By default, once a
/// large block (a segment writer's 1 MB arena pages, a merge's buffers) is
/// freed, blocks up to that size come from the heap from then on, where
/// they fragment and are never given back: a build's anonymous memory grew
/// with the corpus. With the threshold fixed at glibc's default of
/// 128 KiB, large blocks are mapped and unmapped each time, and it does
/// not ([docs/performance.md](../docs/performance.md#the-builds-memory)).
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes a malloc setting; called before any
    // thread is started.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}
