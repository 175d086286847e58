//! The mapped source: a session file as bytes in memory, split into
//! complete lines and, for large files, into newline-aligned chunks.
//!
//! Files are memory-mapped read-only (memmap2), so the bytes are the page
//! cache's: nothing is read into a buffer of ours, and a line that the Pi
//! format stage can judge from its first bytes (a tool result, say) is never
//! copied at all. Lines are found with `memchr`, which scans at several GB/s
//! per core.
//!
//! A final line with no newline is still being written by Pi (it appends
//! with no lock): it is not a line yet, and [`complete_len`] stops before it.
//!
//! Large files are cut into chunks of about [`CHUNK_BYTES`] that end just
//! after a newline, so that one big session still keeps every core busy.
//!
//! Every page of a mapping that is read stays in the process's resident
//! set until it is released ([`MappedFile::release`]). Looking for the end
//! of a line of 200 MB would so hold 200 MB, and reading a file of 30 MB
//! line by line would hold 30 MB by its end: the searches for a newline
//! ([`Lines::releasing`], [`chunks_releasing`]) hand every
//! [`RELEASE_STEP`] they pass to a `release` callback instead, the
//! lines handed out every [`PAGE_STEP`], and the reader of a giant line
//! does the same behind itself.
//!
//! A file truncated by another process while it is mapped would fault
//! (SIGBUS) where it no longer has bytes; a guard turns that into zeros
//! and a flag, [`MappedFile::truncated`], so the build skips the file
//! instead of dying.

mod guard;

use std::fs::File;
use std::io;
use std::path::Path;

use memchr::{memchr, memchr_iter};
use memmap2::Mmap;

/// Target size of one unit of parallel work inside a single file. Files
/// smaller than this are one chunk; a 200 MB session becomes ~7 chunks.
/// 32 MiB keeps per-chunk overhead (one task, one merge) negligible while
/// leaving enough chunks to balance two to sixteen threads.
pub const CHUNK_BYTES: usize = 32 << 20;

/// How much of a file a reader of its lines holds mapped: the lines it
/// has read are released (and, in [`crate::pipeline`], the next are
/// mapped) a step at a time, small enough that what the reading threads
/// hold stays a small part of a build's memory
/// ([docs/performance.md](../../docs/performance.md#the-builds-memory)).
pub const PAGE_STEP: usize = 2 << 20;

/// How far a search for a newline reads before it hands what it passed
/// to its `release` callback: lines up to this long are found with one
/// `memchr` call, as before; a longer one is searched a step at a time.
pub const RELEASE_STEP: usize = 8 << 20;

/// A callback told which byte ranges (`start..end`, offsets in the slice
/// being read) will not be read again soon: their pages may leave memory.
pub type Release<'a> = &'a dyn Fn(usize, usize);

fn keep_pages(_: usize, _: usize) {}

/// A [`Release`] that releases nothing (bytes not from a mapping).
pub const KEEP_PAGES: Release<'static> = &keep_pages;

/// The position of the first `\n` in `bytes`, searched [`RELEASE_STEP`]
/// at a time past the first step, each step passed without one handed to
/// `release`.
#[inline]
pub fn find_newline(bytes: &[u8], release: Release<'_>) -> Option<usize> {
    let first = bytes.len().min(RELEASE_STEP);
    if let Some(i) = memchr(b'\n', &bytes[..first]) {
        return Some(i);
    }
    find_newline_far(bytes, first, release)
}

#[cold]
fn find_newline_far(bytes: &[u8], mut at: usize, release: Release<'_>) -> Option<usize> {
    let mut passed = 0;
    while at < bytes.len() {
        release(passed, at);
        passed = at;
        let end = (at + RELEASE_STEP).min(bytes.len());
        if let Some(i) = memchr(b'\n', &bytes[at..end]) {
            return Some(at + i);
        }
        at = end;
    }
    if passed < at {
        release(passed, at);
    }
    None
}

/// A session file mapped into memory. Empty files are not mapped (mapping
/// zero bytes is an error on most systems); they read as an empty slice.
pub struct MappedFile {
    // Declared before `map` so it is dropped (unregistered) before the
    // mapping goes away.
    guard: Option<guard::Guard>,
    map: Option<Mmap>,
}

impl MappedFile {
    /// Map `path` read-only.
    ///
    /// The mapping reflects the file as it is on disk; if another process
    /// truncates it meanwhile, the missing bytes read as zeros and
    /// [`MappedFile::truncated`] turns true.
    pub fn open(path: &Path) -> io::Result<MappedFile> {
        let file = File::open(path)?;
        Self::from_file(&file)
    }

    /// Map an already opened file.
    pub fn from_file(file: &File) -> io::Result<MappedFile> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Ok(MappedFile {
                guard: None,
                map: None,
            });
        }
        // SAFETY: the mapping is read-only and private to this process. The
        // file may be modified by Pi while we read it; appends are harmless
        // (we never look past the length taken at map time) and the bytes we
        // read are only ever treated as untrusted input.
        let map = unsafe { Mmap::map(file)? };
        let guard = guard::Guard::register(map.as_ptr(), map.len());
        Ok(MappedFile {
            guard: Some(guard),
            map: Some(map),
        })
    }

    /// Whether the file shrank while it was mapped and a read reached past
    /// its new end (those bytes read as zeros): what was parsed from it
    /// must not be trusted.
    pub fn truncated(&self) -> bool {
        self.guard.as_ref().is_some_and(guard::Guard::truncated)
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// Ask the kernel to map `start..end` in one go, before it is read.
    /// Without this every 4 KiB page (or 64 KiB with fault-around) costs a
    /// page fault on first touch, a large share of the time to split a
    /// file into lines
    /// ([docs/performance.md](../../docs/performance.md#the-builds-memory)).
    pub fn prefault(&self, start: usize, end: usize) {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map {
            let end = end.min(map.len());
            if start < end {
                // Best effort: an old kernel without MADV_POPULATE_READ
                // simply faults pages in as they are read.
                let _ = map.advise_range(memmap2::Advice::PopulateRead, start, end - start);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (start, end);
    }

    /// Tell the kernel that `range` of the mapping is no longer needed, so
    /// that its pages stop counting towards this process's memory. The
    /// page cache keeps them; the file is unchanged.
    pub fn release(&self, start: usize, end: usize) {
        #[cfg(unix)]
        if let Some(map) = &self.map {
            let end = end.min(map.len());
            if start < end {
                // SAFETY: the mapping is read-only and shared with the page
                // cache; dropping our page-table entries cannot change what a
                // later read of these bytes returns.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start,
                        end - start,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }
}

/// Length of the prefix of `bytes` made of complete lines: up to and
/// including the last `\n`. The rest, if any, is a line still being written.
pub fn complete_len(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1)
}

/// One line of a file: its bytes without the `\n` (and without a `\r`
/// before it), its 1-based number and the byte offset of its first byte.
#[derive(Clone, Copy, Debug)]
pub struct Line<'a> {
    /// The line's bytes, without its line terminator.
    pub bytes: &'a [u8],
    /// 1-based line number in the file.
    pub number: u64,
    /// Byte offset of the line's first byte in the file.
    pub offset: u64,
}

/// Iterator over the complete lines of a byte range. Every line must end
/// with `\n`: pass a slice cut with [`complete_len`] or [`chunks`].
pub struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    base_offset: u64,
    next_number: u64,
    release: Release<'a>,
    /// Where the bytes not yet handed to `release` begin.
    released: std::cell::Cell<usize>,
}

impl<'a> Lines<'a> {
    /// Lines of `bytes`, which starts at byte `base_offset` of its file and
    /// with line number `first_number`.
    pub fn new(bytes: &'a [u8], base_offset: u64, first_number: u64) -> Self {
        Self::releasing(bytes, base_offset, first_number, KEEP_PAGES)
    }

    /// Like [`Lines::new`], handing to `release` (offsets in `bytes`) the
    /// long stretches that the search for a line's end passes (see
    /// [`find_newline`]), and the lines already handed out each time they
    /// add up to [`PAGE_STEP`]: a reader that is done with a line when
    /// it asks for the next holds at most a step of the file, however
    /// long.
    pub fn releasing(
        bytes: &'a [u8],
        base_offset: u64,
        first_number: u64,
        release: Release<'a>,
    ) -> Self {
        Lines {
            bytes,
            pos: 0,
            base_offset,
            next_number: first_number,
            release,
            released: std::cell::Cell::new(0),
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    #[inline]
    fn next(&mut self) -> Option<Line<'a>> {
        let pos = self.pos;
        let released = self.released.get();
        if pos - released >= PAGE_STEP {
            (self.release)(released, pos);
            self.released.set(pos);
        }
        let rest = &self.bytes[pos..];
        let end = find_newline(rest, &|s, e| {
            (self.release)(pos + s, pos + e);
            self.released.set(pos + e);
        })?;
        let mut line = &rest[..end];
        if let [head @ .., b'\r'] = line {
            line = head;
        }
        let item = Line {
            bytes: line,
            number: self.next_number,
            offset: self.base_offset + self.pos as u64,
        };
        self.pos += end + 1;
        self.next_number += 1;
        Some(item)
    }
}

/// Count the lines (newlines) in `bytes`.
pub fn count_lines(bytes: &[u8]) -> u64 {
    memchr_iter(b'\n', bytes).count() as u64
}

/// A newline-aligned piece of a file: `start..end` are byte offsets, and
/// `end` is just after a `\n` (or the start of the next chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of the chunk's first byte.
    pub start: usize,
    /// Offset one past the chunk's last byte.
    pub end: usize,
}

/// Cut `bytes` (complete lines only) into chunks of about `target` bytes,
/// each ending just after a newline. A line longer than `target` stays
/// whole in one chunk. Returns at least one chunk, even for empty input.
pub fn chunks(bytes: &[u8], target: usize) -> Vec<Chunk> {
    chunks_releasing(bytes, target, KEEP_PAGES)
}

/// Like [`chunks`], handing the long stretches that the search for a
/// chunk's last newline passes (see [`find_newline`]) to `release`.
pub fn chunks_releasing(bytes: &[u8], target: usize, release: Release<'_>) -> Vec<Chunk> {
    let target = target.max(1);
    let mut out = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while bytes.len() - start > target {
        let probe = start + target;
        match find_newline(&bytes[probe..], &|s, e| release(probe + s, probe + e)) {
            Some(i) => {
                let end = probe + i + 1;
                out.push(Chunk { start, end });
                start = end;
            }
            None => break,
        }
    }
    if start < bytes.len() || out.is_empty() {
        out.push(Chunk {
            start,
            end: bytes.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_truncated_while_mapped_reads_as_zeros_and_is_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, vec![b'x'; 3 * 4096 + 100]).unwrap();
        let map = MappedFile::open(&path).unwrap();
        assert!(!map.truncated());
        assert_eq!(map.bytes()[5000], b'x');
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(10)
            .unwrap();
        // Without the guard this read would kill the test process (SIGBUS).
        let sum: u64 = map.bytes().iter().map(|&b| u64::from(b)).sum();
        assert!(sum < u64::from(b'x') * map.bytes().len() as u64);
        assert!(map.truncated());
        assert_eq!(map.bytes()[5000], 0);
    }

    #[test]
    fn complete_len_stops_before_a_half_written_line() {
        assert_eq!(complete_len(b"a\nb\nhalf"), 4);
        assert_eq!(complete_len(b"a\nb\n"), 4);
        assert_eq!(complete_len(b"no newline"), 0);
        assert_eq!(complete_len(b""), 0);
    }

    #[test]
    fn lines_strip_crlf_and_number_from_the_base() {
        let data = b"one\r\n\ntwo\n";
        let lines: Vec<_> = Lines::new(data, 100, 7).collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].bytes, b"one");
        assert_eq!((lines[0].number, lines[0].offset), (7, 100));
        assert_eq!(lines[1].bytes, b"");
        assert_eq!((lines[1].number, lines[1].offset), (8, 105));
        assert_eq!(lines[2].bytes, b"two");
        assert_eq!((lines[2].number, lines[2].offset), (9, 106));
    }

    #[test]
    fn a_long_search_for_a_newline_hands_back_every_step_it_passed() {
        let mut data = b"short\n".to_vec();
        data.resize(data.len() + 3 * RELEASE_STEP + 10, b'x');
        data.extend_from_slice(b"\nnext\n");
        let released = std::cell::RefCell::new(Vec::new());
        let record = |s: usize, e: usize| released.borrow_mut().push((s, e));
        let lens: Vec<_> = Lines::releasing(&data, 0, 1, &record)
            .map(|l| l.bytes.len())
            .collect();
        assert_eq!(lens, [5, 3 * RELEASE_STEP + 10, 4]);
        let r = released.take();
        // The giant line's steps, in order, none longer than a step; the
        // short lines release nothing.
        assert_eq!(r.first(), Some(&(6, 6 + RELEASE_STEP)));
        assert!(r.windows(2).all(|w| w[0].1 == w[1].0), "{r:?}");
        assert!(r.iter().all(|(s, e)| e - s <= RELEASE_STEP));
        assert_eq!(r.last().unwrap().1, 6 + 3 * RELEASE_STEP);

        let cs = chunks_releasing(&data, 16, &record);
        assert_eq!(cs.len(), 2);
        let r = released.take();
        assert_eq!(r.first().map(|p| p.0), Some(16));
        assert!(r.iter().all(|(s, e)| e - s <= RELEASE_STEP));
    }

    #[test]
    fn a_reader_of_lines_hands_back_what_it_read_a_step_at_a_time() {
        let line = [b"y".repeat(99), b"\n".to_vec()].concat();
        let data = line.repeat(5 * PAGE_STEP / line.len() + 7);
        let released = std::cell::RefCell::new(Vec::new());
        let read_to = std::cell::Cell::new(0);
        let record = |s: usize, e: usize| released.borrow_mut().push((s, e, read_to.get()));
        let mut count = 0;
        for l in Lines::releasing(&data, 0, 1, &record) {
            count += 1;
            read_to.set(l.offset as usize + l.bytes.len() + 1);
        }
        assert_eq!(count, data.len() / line.len());
        let r = released.take();
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[0].0, 0);
        for (i, &(s, e, read)) in r.iter().enumerate() {
            // Whole lines, a step or a line more, from where the last ended.
            assert!(i == 0 || r[i - 1].1 == s, "{r:?}");
            assert!(
                e - s >= PAGE_STEP && e - s < PAGE_STEP + line.len(),
                "{r:?}"
            );
            assert_eq!(e % line.len(), 0);
            // Only lines already handed out.
            assert_eq!(e, read);
        }
        // Without a release, nothing changes in what is read.
        assert_eq!(Lines::new(&data, 0, 1).count(), count);
    }

    #[test]
    fn chunks_end_after_newlines_and_cover_everything() {
        let data = b"aaaa\nbb\ncccccccccc\nd\n";
        let cs = chunks(data, 3);
        assert_eq!(cs.first().unwrap().start, 0);
        assert_eq!(cs.last().unwrap().end, data.len());
        for w in cs.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        for c in &cs {
            assert_eq!(data[c.end - 1], b'\n');
        }
        assert_eq!(chunks(b"", 10), vec![Chunk { start: 0, end: 0 }]);
        assert_eq!(chunks(data, 1 << 20).len(), 1);
    }
}
