//! One file's update of the index: open, fingerprint, map, decide what is
//! new (a new file, a grown one, a rewritten one), parse, and queue its
//! documents and its session record.

use std::collections::HashMap;
use std::fs::File;

use super::parse::parse_mapped;
use super::report::{DamageReport, TruncationReport};
use crate::discover::{Candidate, FileIdentity};
use crate::index::state::{FileState, FileStates};
use crate::index::writer::{title_of, IndexBuilder, SessionMeta, SessionRecord};
use crate::index::IndexError;
use crate::pi::fingerprint::{read_header, Rejection};
use crate::pi::session::EntryState;
use crate::pi::{Kinds, Role};
use crate::source::MappedFile;

/// What happened to one file.
pub(super) enum Outcome {
    Indexed {
        how: How,
        lines: u64,
        bytes: u64,
        bytes_parsed: u64,
        documents: u64,
        damage: Vec<DamageReport>,
        recovered: Vec<DamageReport>,
        truncated: Vec<TruncationReport>,
        newer: Option<u64>,
    },
    Rejected(Rejection),
    Failed(String),
}

/// How an indexed file was treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum How {
    New,
    Grown,
    Replaced,
}

/// Everything a worker needs to process files.
pub(super) struct Work<'a> {
    pub(super) kinds: Kinds,
    pub(super) index: &'a IndexBuilder,
    /// The last committed index, for what grown files already have.
    pub(super) searcher: &'a tantivy::Searcher,
    pub(super) pi: &'a crate::index::PiIndex,
    pub(super) states: &'a FileStates,
    /// The agent of each root that belongs to one ([`crate::discover::root_agents`]).
    pub(super) agents: &'a HashMap<std::path::PathBuf, crate::pi::Agent>,
}

pub(super) fn process(c: &Candidate, w: &Work<'_>) -> Result<Outcome, IndexError> {
    let path_str = c.path.to_string_lossy();
    // Unchanged files were left out by `build` before reaching here.
    let old = w.states.get(path_str.as_ref());
    let mut file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let (first, header) = match read_header(&mut file) {
        Ok(Ok(h)) => h,
        Ok(Err(r)) => {
            if old.is_some() {
                w.index.delete_path(&path_str)?;
            }
            return Ok(Outcome::Rejected(r));
        }
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let identity = match file.metadata() {
        Ok(m) => FileIdentity::of(&m),
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    let map = match MappedFile::from_file(&file) {
        Ok(m) => m,
        Err(e) => return Ok(Outcome::Failed(e.to_string())),
    };
    crate::failpoint::disturb(crate::failpoint::Disturb::Shrink, &c.path);
    let bytes = map.bytes();
    // Grown: the same file, with the bytes indexed before intact.
    // Oh My Pi rewrites its title slot in place: not a change of the
    // bytes indexed.
    let slot_end = header.slot.as_ref().map_or(0, |s| s.end);
    let grown = old.filter(|st| st.grown(&identity, bytes, slot_end));
    let (mut session, complete) =
        parse_mapped(&map, header, &first, w.kinds, grown.map(|st| st.indexed_to));
    let state = FileState::of(bytes, identity, slot_end, complete);
    if map.truncated() {
        // Another process cut the file while we read it (Pi rewrites whole
        // files): what we parsed is not trustworthy. Keep what the index
        // has; the next build reads the file as it is then.
        return Ok(Outcome::Failed(
            "the file shrank while it was being read: skipped this time".into(),
        ));
    }
    drop(map);

    let documents = std::mem::take(&mut session.documents);
    let root = c.root.to_string_lossy();
    let mut meta = SessionMeta::of(&session, &path_str);
    meta.root = Some(&root);
    // What the file says, else whose directory it was found in, else Pi.
    meta.agent = session
        .header
        .written_by
        .or_else(|| w.agents.get(&*c.root).copied())
        .unwrap_or_default();
    let how;
    let mut title = documents
        .iter()
        .find(|d| d.role == Role::User)
        .map(|d| title_of(&d.text));
    let mut messages = documents.len() as u64;
    let mut last_ms = documents.iter().filter_map(|d| d.timestamp_ms).max();
    let mut models: Vec<String> = documents.iter().filter_map(|d| d.model.clone()).collect();
    let mut head = crate::index::lineage::head_of(&documents);
    let mut usage = crate::index::spent::Spent::default();
    if grown.is_some() {
        how = How::Grown;
        // The usage of the part read before, then the new lines'.
        usage = w.pi.recorded_usage(w.searcher, &path_str)?;
        let before = w.pi.stored_session_at(w.searcher, &path_str)?;
        if let Some(b) = before {
            if b.title.is_some() {
                title = b.title;
            }
            messages += b.messages;
            last_ms = last_ms.max(b.last_ms);
            // The first message is in the part indexed before.
            if b.head != 0 {
                head = b.head;
            }
            models.extend(b.models);
        }
        w.index.delete_session_record(&path_str)?;
        // Entries whose branch status or edit mark the new entries
        // changed: re-add their documents with the new state.
        if !session.changed.is_empty() {
            let mut offsets: Vec<u64> = session.changed.iter().map(|(o, _, _)| *o).collect();
            offsets.dedup();
            let mut docs = w.pi.stored_entries(w.searcher, &path_str, &offsets)?;
            w.index.delete_entries(&path_str, &offsets)?;
            // The documents of a line are re-added whole; those of the
            // entries that changed get their new state.
            docs.sort_by(|a, b| {
                (a.offset, &a.entry_id, a.role).cmp(&(b.offset, &b.entry_id, b.role))
            });
            let now: HashMap<(u64, Option<&str>), &EntryState> = session
                .changed
                .iter()
                .map(|(o, id, st)| ((*o, id.as_deref()), st))
                .collect();
            for entry in
                docs.chunk_by_mut(|a, b| (a.offset, &a.entry_id) == (b.offset, &b.entry_id))
            {
                if let Some(st) = now.get(&(entry[0].offset, entry[0].entry_id.as_deref())) {
                    st.apply(entry);
                }
            }
            w.index.add_documents(&meta, docs)?;
        }
    } else if old.is_some() {
        how = How::Replaced;
        w.index.delete_path(&path_str)?;
    } else {
        how = How::New;
    }
    models.sort_unstable();
    models.dedup();
    usage.extend(&session.usage);
    let mut documents = documents;
    crate::failpoint::drop_last(&c.path, &mut documents);
    let count = documents.len() as u64;
    w.index.add_documents(&meta, documents)?;
    crate::failpoint::panic_on(&c.path);
    w.index.add_session_record(&SessionRecord {
        meta: meta.clone(),
        state,
        title,
        messages,
        last_ms,
        models,
        head,
        usage,
    })?;
    let report = |list: &[crate::pi::Damage]| {
        list.iter()
            .map(|d| DamageReport {
                path: path_str.clone().into_owned(),
                line: d.line,
                error: d.error.clone(),
            })
            .collect::<Vec<_>>()
    };
    let damage = report(&session.damage);
    let recovered = report(&session.recovered);
    let truncated = session
        .truncated
        .iter()
        .map(|t| TruncationReport {
            path: path_str.clone().into_owned(),
            line: t.line,
            line_bytes: t.line_bytes,
            indexed_bytes: t.indexed_bytes,
        })
        .collect();
    Ok(Outcome::Indexed {
        how,
        lines: session.lines,
        bytes: complete - grown.map_or(0, |st| st.indexed_to),
        bytes_parsed: session.bytes_parsed,
        documents: count,
        damage,
        recovered,
        truncated,
        newer: (session.header.version > 3).then_some(session.header.version),
    })
}
