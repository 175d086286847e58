//! One session file's entries, parsed: complete lines only, in chunks
//! parsed in parallel for large files, each thread with its own reused
//! [`ChunkParser`].

use std::cell::RefCell;
use std::fs::File;
use std::path::Path;

use rayon::prelude::*;

use crate::pi::fingerprint::{read_header, FirstLine, Header, Rejection};
use crate::pi::{ChunkParser, Kinds, ParsedChunk, Session};
use crate::source::{chunks_releasing, complete_len, MappedFile, CHUNK_BYTES, PAGE_STEP};

thread_local! {
    static PARSER: RefCell<ChunkParser> = RefCell::new(ChunkParser::new());
}

/// Parse one accepted session file into a [`Session`]. Public so that
/// benchmarks and tests can run the read-and-extract stages without an
/// index. Returns the session and the bytes of complete lines.
pub fn read_session(
    path: &Path,
    kinds: Kinds,
) -> std::io::Result<Result<(Session, u64), Rejection>> {
    let mut file = File::open(path)?;
    let (first, header) = match read_header(&mut file)? {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    let map = MappedFile::from_file(&file)?;
    let (session, complete) = parse_mapped(&map, header, &first, kinds, None);
    Ok(Ok((session, complete)))
}

/// Parse a session file that is already mapped: the parse and extract
/// stages alone, without opening, mapping or unmapping anything. Public so
/// that benchmarks can tell those costs apart; [`read_session`] is the
/// same from a path. Returns the session and the bytes of complete lines.
pub fn parse_session(
    map: &MappedFile,
    kinds: Kinds,
) -> std::io::Result<Result<(Session, u64), Rejection>> {
    let (first, header) = match read_header(&mut map.bytes())? {
        Ok(h) => h,
        Err(r) => return Ok(Err(r)),
    };
    Ok(Ok(parse_mapped(map, header, &first, kinds, None)))
}

/// Parse the entries of a mapped session whose header was already read.
/// With `indexed_to`, the lines before that offset were indexed by an
/// earlier build: only their links are read, and only the lines after it
/// yield documents. Returns the session and the bytes of complete lines.
pub(super) fn parse_mapped(
    map: &MappedFile,
    header: Header,
    first: &FirstLine,
    kinds: Kinds,
    indexed_to: Option<u64>,
) -> (Session, u64) {
    let bytes = map.bytes();
    let complete = complete_len(bytes);
    let start = (first.end as usize).min(complete);
    let split = indexed_to.map_or(start, |to| (to as usize).clamp(start, complete));
    let version = header.version;
    let old = parse_range(map, start, split, version, kinds, true);
    let new = parse_range(map, split, complete, version, kinds, false);
    let session = if indexed_to.is_some() {
        Session::finish_grown(header, old, new, first.number + 1)
    } else {
        let mut all = old;
        all.extend(new);
        Session::finish(header, all, first.number + 1)
    };
    (session, complete as u64)
}

/// Parse the complete lines of a mapped session that end at or before
/// byte `to`, as a fresh build of those bytes would (`check`).
pub(super) fn parse_prefix(
    map: &MappedFile,
    header: Header,
    first: &FirstLine,
    kinds: Kinds,
    to: u64,
) -> Session {
    let bytes = map.bytes();
    let end = (to as usize).min(bytes.len());
    let complete = complete_len(&bytes[..end]);
    let start = (first.end as usize).min(complete);
    let all = parse_range(map, start, complete, header.version, kinds, false);
    Session::finish(header, all, first.number + 1)
}

/// Parse `from..to` of a mapped file (complete lines) in chunks, in
/// parallel when there are several.
fn parse_range(
    map: &MappedFile,
    from: usize,
    to: usize,
    version: u64,
    kinds: Kinds,
    links_only: bool,
) -> Vec<ParsedChunk> {
    if from >= to {
        return Vec::new();
    }
    let body = &map.bytes()[from..to];
    // A giant line's pages are released as the search for its end passes
    // them (and again as it is read): never resident whole.
    let pieces = chunks_releasing(body, CHUNK_BYTES, &|s, e| map.release(from + s, from + e));
    // Files of several chunks are where page faults add up: map a chunk's
    // pages a step at a time, in one go before they are read. What has been
    // read leaves our resident set a step at a time too (the lines hand it
    // to `release`), so that peak memory is a few steps, not the chunk.
    let manage_pages = pieces.len() > 1;
    let parse = |c: &crate::source::Chunk| -> ParsedChunk {
        // A chunk much larger than the target holds a giant line: its
        // pages are released as it is read, not all mapped at once.
        let prefault = manage_pages && c.end - c.start <= 2 * CHUNK_BYTES;
        let (start, end) = (from + c.start, from + c.end);
        let ahead = |at: usize| {
            if prefault {
                map.prefault(start + at, (start + at + PAGE_STEP).min(end));
            }
        };
        ahead(0);
        let bytes = &body[c.start..c.end];
        let offset = start as u64;
        let release = |s: usize, e: usize| {
            map.release(start + s, start + e);
            ahead(e);
        };
        let parsed = PARSER.with(|p| {
            let mut p = p.borrow_mut();
            if links_only {
                p.parse_links_paged(bytes, offset, version, &release)
            } else {
                p.parse_chunk_paged(bytes, offset, version, kinds, &release)
            }
        });
        if manage_pages {
            map.release(from + c.start, from + c.end);
        }
        parsed
    };
    if pieces.len() == 1 {
        vec![parse(&pieces[0])]
    } else {
        pieces.par_iter().map(parse).collect()
    }
}
