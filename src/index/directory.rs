//! The directory an index lives in: tantivy's [`MmapDirectory`], with its
//! small files written our way.
//!
//! tantivy writes `meta.json` and `.managed.json` atomically through a
//! temporary file created mode 0600, so they end up readable by their
//! owner alone, while every segment file beside them gets the mode the
//! umask gives (0644 usually): another user could read the data but not
//! open the index. Here the temporary file is created like any other
//! (0666 less the umask), so an index is exactly as readable as the files
//! it is made of, and a shared index can be searched by whoever may read
//! its directory. Keeping an index private is the directory's business
//! (`chmod 700`, or a umask of 077), as for any other file.
//!
//! A reader takes tantivy's meta lock while it loads the list of
//! segments; tantivy opens lock files for writing, which a user who may
//! only read the index cannot, so that lock is then taken on a read-only
//! descriptor (`flock` needs no more).
//!
//! With the `failpoints` feature, writes can also be made to fail as on a
//! full disk (see `crate::failpoint::write_allowance`).
//!
//! # Mapped files released as a build goes
//!
//! A build's index is opened with a [`Mapped`] register: its files are
//! mapped here (not by tantivy's directory) and each mapping is recorded,
//! so that [`Mapped::release`] can drop every mapped page from the
//! process's page tables (`MADV_DONTNEED`). A merge maps and reads every
//! file of the segments it merges; without the release, the pages it read
//! stayed counted in the build's memory until the merge ended
//! ([docs/performance.md](../../docs/performance.md#the-builds-memory)).
//! The pages stay in the page cache: what is read again is mapped again
//! from it on the next access (a minor fault), and since index files are
//! never written once they are mapped (segments are immutable), dropping
//! them cannot change what is read.
//!
//! The web view's and the MCP server's index is opened with one too: a
//! long-running reader touches more of the index with every new query
//! (the doc store of every listed session, the postings of every word),
//! and without the release those pages would stay counted in its memory
//! up to the size of the index ([`crate::live::State::release_if_over`]).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use memmap2::Mmap;
use tantivy::directory::OwnedBytes;

use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle,
    WritePtr, META_LOCK,
};

/// An index directory on disk (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct IndexDir {
    inner: MmapDirectory,
    root: PathBuf,
    /// Where the files it maps are recorded, for a build.
    mapped: Option<Arc<Mapped>>,
}

impl IndexDir {
    /// The existing directory at `root`; with `mapped`, the files it
    /// reads are mapped here and recorded there (a build's index).
    pub(crate) fn open(
        root: &Path,
        mapped: Option<Arc<Mapped>>,
    ) -> Result<IndexDir, OpenDirectoryError> {
        Ok(IndexDir {
            inner: MmapDirectory::open(root)?,
            root: root.to_owned(),
            mapped,
        })
    }
}

/// The index files mapped through an [`IndexDir`] opened with it, while
/// they are in use (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Mapped {
    maps: Mutex<Vec<Weak<Mmap>>>,
}

impl Mapped {
    /// Drop the pages of every file still mapped from the process's page
    /// tables; they are mapped again from the page cache when read.
    pub(crate) fn release(&self) {
        let live: Vec<Arc<Mmap>> = {
            let mut maps = self.maps.lock().unwrap_or_else(|p| p.into_inner());
            maps.retain(|m| m.strong_count() > 0);
            maps.iter().filter_map(Weak::upgrade).collect()
        };
        for map in live {
            // SAFETY: a read-only shared mapping of a file that is never
            // written again (a segment file, immutable once written):
            // after MADV_DONTNEED its pages read the same bytes again, from
            // the page cache. The mapping is alive (held by `map`).
            #[cfg(unix)]
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
            // Elsewhere there is no such advice: the pages stay mapped
            // until the mapping is dropped.
            #[cfg(not(unix))]
            drop(map);
        }
    }

    /// Map the file at `path` (`name` in the index) and record it.
    fn map(&self, path: &Path, name: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        let io_error = |io_error: io::Error| {
            if io_error.kind() == io::ErrorKind::NotFound {
                OpenReadError::FileDoesNotExist(name.to_owned())
            } else {
                OpenReadError::wrap_io_error(io_error, name.to_owned())
            }
        };
        let file = File::open(path).map_err(io_error)?;
        if file.metadata().map_err(io_error)?.len() == 0 {
            // Nothing to map (mmap refuses an empty range).
            return Ok(Arc::new(OwnedBytes::empty()));
        }
        // SAFETY: index files are not written or cut once written (as for
        // tantivy's own MmapDirectory, which maps them the same way).
        let map = Arc::new(unsafe { Mmap::map(&file) }.map_err(io_error)?);
        self.maps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::downgrade(&map));
        Ok(Arc::new(OwnedBytes::new(MappedBytes(map))))
    }
}

/// The bytes of mapped files (and shared memory) this process holds in
/// memory: `/proc/self/statm`'s shared pages, where there is one.
pub(crate) fn file_backed() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(2)?.parse().ok()?;
    Some(pages * page_size())
}

/// The size of a memory page.
#[cfg(unix)]
fn page_size() -> u64 {
    // SAFETY: sysconf only reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).unwrap_or(4096)
}

/// The size of a memory page: never asked where there is no
/// `/proc/self/statm` to count pages in.
#[cfg(not(unix))]
fn page_size() -> u64 {
    4096
}

/// A mapping's bytes, shared by the slices tantivy reads from it.
struct MappedBytes(Arc<Mmap>);

impl std::ops::Deref for MappedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

// SAFETY: the bytes are those of the mapping, which does not move while
// the Arc holding it lives, wherever the `MappedBytes` itself moves.
unsafe impl stable_deref_trait::StableDeref for MappedBytes {}

/// A name for a temporary file no other writer uses at the same time:
/// `.tmp` and 8 hex digits (the name pattern an interrupted write leaves,
/// which `build` recognises as tantivy's own).
fn temp_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mix = (u64::from(std::process::id()) << 32) ^ (n << 20) ^ nanos;
    format!(".tmp{:08x}", (mix ^ (mix >> 32)) as u32)
}

/// Write `data` to `path` atomically: into a new file beside it, synced,
/// then renamed over it. On failure the new file is removed.
fn atomic_write(path: &Path, data: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let (tmp, mut file) = loop {
        let tmp = dir.join(temp_name());
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let written = write_limited(&mut file, data)
        .and_then(|()| file.sync_data())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// `write_all`, unless fault injection says the disk is full first.
fn write_limited(file: &mut File, data: &[u8]) -> io::Result<()> {
    let allowed = crate::failpoint::write_allowance(data.len());
    file.write_all(&data[..allowed])?;
    if allowed < data.len() {
        return Err(io::Error::from_raw_os_error(libc::ENOSPC));
    }
    Ok(())
}

/// An exclusive `flock` of the existing file at `path`, opened read-only;
/// released when the returned lock is dropped (the file is closed).
#[cfg(unix)]
fn read_only_lock(path: &Path, blocking: bool) -> Result<DirectoryLock, LockError> {
    use std::os::fd::AsRawFd;
    let file = File::open(path).map_err(LockError::wrap_io_error)?;
    let op = if blocking {
        libc::LOCK_EX
    } else {
        libc::LOCK_EX | libc::LOCK_NB
    };
    loop {
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(DirectoryLock::from(Box::new(file)));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Err(LockError::LockBusy),
            _ => return Err(LockError::wrap_io_error(e)),
        }
    }
}

/// Whether a build holds the index's write lock in `dir` (tantivy's
/// writer lock file, locked exclusively while a build writes). Asked by
/// taking a shared lock without waiting and giving it back at once; a
/// build that tries to lock in that instant waits for it
/// ([`super::writer::IndexStore::writer`]).
#[cfg(unix)]
pub(crate) fn writer_lock_held(dir: &Path) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(file) = File::open(dir.join(tantivy::directory::INDEX_WRITER_LOCK.filepath.as_path()))
    else {
        return false;
    };
    loop {
        // SAFETY: flock on a descriptor this function owns; closing it
        // releases the lock.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return false;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return e.kind() == io::ErrorKind::WouldBlock;
        }
    }
}

/// Elsewhere the lock is not asked: a first build in progress reads as
/// one that stopped.
#[cfg(not(unix))]
pub(crate) fn writer_lock_held(_dir: &Path) -> bool {
    false
}

#[cfg(not(unix))]
fn read_only_lock(_path: &Path, _blocking: bool) -> Result<DirectoryLock, LockError> {
    Err(LockError::wrap_io_error(
        io::ErrorKind::PermissionDenied.into(),
    ))
}

impl Directory for IndexDir {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        match &self.mapped {
            Some(mapped) => mapped.map(&self.root.join(path), path),
            None => self.inner.get_file_handle(path),
        }
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        // As tantivy's directory opens it (a new file, synced when it is
        // terminated), written back as it is written.
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.root.join(path))
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        let w: WritePtr = io::BufWriter::new(Box::new(WrittenBack::new(file)));
        #[cfg(feature = "failpoints")]
        let w = faulty::wrap(w);
        Ok(w)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        atomic_write(&self.root.join(path), data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        match self.inner.acquire_lock(lock) {
            // tantivy opens lock files for writing, also the one a reader
            // takes while it loads the list of segments; a user who may
            // only read the index still takes that one, on a read-only
            // descriptor (flock needs no more).
            Err(LockError::IoError(e))
                if lock.filepath == META_LOCK.filepath
                    && matches!(
                        e.kind(),
                        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem
                    ) =>
            {
                read_only_lock(&self.root.join(&lock.filepath), lock.is_blocking)
            }
            other => other,
        }
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(watch_callback)
    }
}

/// A segment file being written, whose pages the kernel is asked to
/// start writing to disk every [`WrittenBack::EVERY`] bytes
/// (`sync_file_range`, which does not wait), so that the sync when it is
/// terminated (at the commit, for most files) waits for the last bytes
/// only: the disk writes while the build parses and serializes, instead
/// of after ([docs/performance.md](../../docs/performance.md#the-commit)).
struct WrittenBack {
    file: File,
    /// Bytes written.
    written: u64,
    /// Bytes asked to be written back.
    asked: u64,
}

impl WrittenBack {
    /// How many bytes are written before their writeback is started.
    const EVERY: u64 = 4 << 20;

    fn new(file: File) -> WrittenBack {
        WrittenBack {
            file,
            written: 0,
            asked: 0,
        }
    }

    /// Start writing back what was written since the last time.
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a plain system call on a descriptor this value owns.
            // Its failure changes nothing: the sync at the end writes
            // whatever is left.
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    self.asked as libc::off64_t,
                    (self.written - self.asked) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        // Elsewhere the sync at the end writes it all.
        self.asked = self.written;
    }
}

impl Write for WrittenBack {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.asked >= Self::EVERY {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl tantivy::directory::TerminatingWrite for WrittenBack {
    fn terminate_ref(&mut self, _: tantivy::directory::AntiCallToken) -> io::Result<()> {
        self.file.flush()?;
        self.file.sync_data()
    }
}

/// Segment writers that run out of (injected) disk space.
#[cfg(feature = "failpoints")]
mod faulty {
    use std::io::{self, BufWriter, Write};

    use tantivy::directory::{AntiCallToken, TerminatingWrite, WritePtr};

    struct Faulty(WritePtr);

    pub(super) fn wrap(w: WritePtr) -> WritePtr {
        BufWriter::new(Box::new(Faulty(w)))
    }

    impl Write for Faulty {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let allowed = crate::failpoint::write_allowance(buf.len());
            if (allowed == 0 || crate::failpoint::merge_out_of_space()) && !buf.is_empty() {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            self.0.write(&buf[..allowed])
        }

        fn flush(&mut self) -> io::Result<()> {
            self.0.flush()
        }
    }

    impl TerminatingWrite for Faulty {
        fn terminate_ref(&mut self, token: AntiCallToken) -> io::Result<()> {
            self.0.terminate_ref(token)
        }
    }
}

/// Whether `dir` holds nothing but files tantivy writes.
pub(crate) fn only_index_files(dir: &Path) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(dir)? {
        if !is_tantivy_file(&entry?.file_name().to_string_lossy()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a file name is one tantivy writes in an index directory: its
/// bookkeeping files and locks, the temporary file of an atomic write
/// (`.tmpXXXXXX`, left behind when a build is killed while writing
/// `meta.json`), and segment files (32 hex digits and an extension); or
/// what a build saves beside them ([`super::saved`]).
fn is_tantivy_file(name: &str) -> bool {
    if matches!(
        name,
        "meta.json" | ".managed.json" | ".tantivy-meta.lock" | ".tantivy-writer.lock"
    ) || (name.starts_with(".tmp") && name.len() <= 16)
        || super::saved::mark::GROUPS.contains(&name)
        || super::saved::mark::STATES.contains(&name)
    {
        return true;
    }
    let (stem, ext) = name.split_once('.').unwrap_or((name, ""));
    stem.len() == 32 && stem.bytes().all(|b| b.is_ascii_hexdigit()) && !ext.is_empty()
}

/// Remove the files of an index of ours, leaving the directory.
pub(super) fn clear_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn small_files_get_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let dir = IndexDir::open(t.path(), None).unwrap();
        dir.atomic_write(Path::new("meta.json"), b"{}").unwrap();
        let plain = t.path().join("plain");
        File::create(&plain).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&t.path().join("meta.json")), mode(&plain));
        assert_eq!(std::fs::read(t.path().join("meta.json")).unwrap(), b"{}");
        // Nothing else is left beside it.
        assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 2);
    }
}
