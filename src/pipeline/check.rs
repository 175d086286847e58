//! `pi-index check`: the index compared with the session files, document
//! by document, as a fresh build of the same bytes would index them.
//!
//! For every session file the index holds, the file's bytes up to where
//! the index says it read them ([`FileState::indexed_to`]) are parsed
//! again with the kinds the index was built with, and the documents that
//! gives are compared with the documents the index holds for the file:
//!
//! - **doubled**: a document the index holds more often than the file
//!   gives it (two builds that both indexed the same appended lines);
//! - **missing**: a document the file gives that the index lacks;
//! - **stale**: a document the index holds that the file does not give
//!   (or gives with other text, branch mark or edit mark);
//! - **orphans**: documents whose session record is gone;
//! - **records**: a file with more than one session record, or a record
//!   whose message count or state disagrees with the file (the state
//!   says the file is unchanged, but its bytes are not the ones indexed).
//!
//! Files that changed since the last build (grown, rewritten, moved,
//! deleted, or new) are not defects: the next build brings them up to
//! date, and they are counted as such. `--repair` reads the files with
//! defects again from their first byte and removes orphans, in one
//! incremental build ([`super::repair`]): the rest of the index is left
//! as it is.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;

use serde::Serialize;
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::Term;

use super::parse::parse_prefix;
use crate::discover::{discover, FileIdentity};
use crate::index::schema::{session_key, SESSION_DOC};
use crate::index::state::{hashes, FileState};
use crate::index::writer::IndexStore;
use crate::index::{tantivy_err, IndexError, PiIndex};
use crate::pi::fingerprint::read_header;
use crate::pi::{Document, Kinds};
use crate::source::MappedFile;

/// How many files with defects a report lists by name.
pub const CHECK_LIST_CAP: usize = 100;

/// What `check` found: the `--json` output contract.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct CheckReport {
    /// Session files the index holds.
    pub files_checked: u64,
    /// Documents the index holds.
    pub documents: u64,
    /// Documents held more often than the file gives them.
    pub doubled: u64,
    /// Documents the file gives that the index lacks.
    pub missing: u64,
    /// Documents held that the file does not give (or gives otherwise).
    pub stale: u64,
    /// Documents whose session record is gone.
    pub orphans: u64,
    /// Files whose session record disagrees with the file (or that have
    /// more than one record).
    pub records: u64,
    /// Files changed since the last build (grown, rewritten, moved or
    /// deleted) and files not indexed yet: not defects; the next build
    /// brings them up to date.
    pub out_of_date: u64,
    /// The files with defects, in path order, at most [`CHECK_LIST_CAP`].
    pub defects: Vec<FileDefects>,
    /// Files with defects not listed in `defects`.
    pub defects_more: u64,
    /// Files repaired (`--repair`), 0 otherwise.
    pub repaired: u64,
    /// Orphaned documents' sessions (keys), for the repair.
    #[serde(skip)]
    pub orphan_keys: Vec<u64>,
    /// Every file with defects, for the repair.
    #[serde(skip)]
    pub defective_paths: Vec<String>,
}

impl CheckReport {
    /// Whether the index holds exactly what the files give.
    pub fn is_clean(&self) -> bool {
        self.doubled == 0
            && self.missing == 0
            && self.stale == 0
            && self.orphans == 0
            && self.records == 0
    }
}

/// The defects of one session file.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct FileDefects {
    /// The session file.
    pub path: String,
    /// Documents held more often than the file gives them.
    pub doubled: u64,
    /// Documents the file gives that the index lacks.
    pub missing: u64,
    /// Documents held that the file does not give.
    pub stale: u64,
    /// What is wrong with its record, if anything.
    pub record: Option<String>,
}

impl FileDefects {
    fn any(&self) -> bool {
        self.doubled + self.missing + self.stale > 0 || self.record.is_some()
    }
}

/// Compare the index at `index_dir` with the session files below `roots`
/// (where the build found them).
pub fn check(
    index_dir: &std::path::Path,
    roots: &[std::path::PathBuf],
) -> Result<CheckReport, IndexError> {
    let pi = PiIndex::open(index_dir)?;
    let info = pi.build_info()?;
    let kinds = match &info {
        Some(i) => Kinds::parse(&i.kinds).unwrap_or_default(),
        None => Kinds::default(),
    };
    let store = IndexStore::of(pi);
    let pi = &store.pi;
    let searcher = pi.searcher()?;
    let states = store.file_states()?;
    let mut report = CheckReport {
        files_checked: states.len() as u64,
        ..CheckReport::default()
    };

    // Records per file, and the keys that have one.
    let records = record_counts(pi, &searcher)?;
    let with_record: HashSet<u64> = records.keys().map(|p| session_key(p)).collect();
    // Documents per session key, by the `sess` column.
    let per_key = message_counts(pi, &searcher)?;
    report.documents = per_key.values().sum();
    for (key, n) in &per_key {
        if !with_record.contains(key) {
            report.orphans += n;
            report.orphan_keys.push(*key);
        }
    }
    report.orphan_keys.sort_unstable();

    // Files found now, to tell out-of-date ones from defects.
    let found = discover(roots);
    let now: HashMap<String, FileIdentity> = found
        .files
        .iter()
        .map(|c| (c.path.to_string_lossy().into_owned(), c.identity))
        .collect();
    // Sessions not indexed yet (what the fingerprint rejects is never
    // indexed, so it is not out of date).
    report.out_of_date += now
        .keys()
        .filter(|p| !states.contains_key(*p))
        .filter(|p| File::open(p).is_ok_and(|mut f| matches!(read_header(&mut f), Ok(Ok(_)))))
        .count() as u64;

    let mut defects: Vec<FileDefects> = Vec::new();
    let mut paths: Vec<&String> = states.keys().collect();
    paths.sort();
    for path in paths {
        let state = &states[path];
        let mut d = FileDefects {
            path: path.clone(),
            ..FileDefects::default()
        };
        if records.get(path).copied().unwrap_or(0) > 1 {
            d.record = Some(format!("{} session records", records[path]));
        }
        let held: Vec<Document> = pi.stored_documents_of(&searcher, path)?;
        match expected(path, state, kinds) {
            Expected::Documents(want) => {
                compare(&mut d, want, held.clone());
                let counted = pi
                    .stored_session_at(&searcher, path)?
                    .map_or(0, |row| row.messages);
                if d.record.is_none() && counted != held.len() as u64 {
                    d.record = Some(format!(
                        "its record counts {counted} messages, the index holds {}",
                        held.len()
                    ));
                }
                // Grown since, or no longer under these roots: the part
                // indexed is as it should be, the rest is the next build's.
                if !now.get(path).is_some_and(|id| state.unchanged(id)) {
                    report.out_of_date += 1;
                }
            }
            Expected::Changed => report.out_of_date += 1,
            Expected::StateWrong(why) => {
                if d.record.is_none() {
                    d.record = Some(why);
                }
            }
        }
        report.doubled += d.doubled;
        report.missing += d.missing;
        report.stale += d.stale;
        if d.record.is_some() {
            report.records += 1;
        }
        if d.any() {
            defects.push(d);
        }
    }
    report.defective_paths = defects.iter().map(|d| d.path.clone()).collect();
    report.defects_more = defects.len().saturating_sub(CHECK_LIST_CAP) as u64;
    defects.truncate(CHECK_LIST_CAP);
    report.defects = defects;
    Ok(report)
}

/// What the file gives, as far as the index says it read it.
enum Expected {
    /// The documents a fresh build of those bytes indexes.
    Documents(Vec<Document>),
    /// The file is gone, shorter, or its indexed bytes changed: the next
    /// build replaces it; nothing to compare.
    Changed,
    /// The state says the file is as indexed, but its bytes differ: the
    /// next build would not read it again.
    StateWrong(String),
}

fn expected(path: &str, state: &FileState, kinds: Kinds) -> Expected {
    let Ok(mut file) = File::open(path) else {
        return Expected::Changed;
    };
    let Ok(Ok((first, header))) = read_header(&mut file) else {
        return Expected::Changed;
    };
    let (Ok(meta), Ok(map)) = (file.metadata(), MappedFile::from_file(&file)) else {
        return Expected::Changed;
    };
    let identity = FileIdentity::of(&meta);
    let bytes = map.bytes();
    let slot_end = header.slot.as_ref().map_or(0, |s| s.end);
    let intact = (bytes.len() as u64) >= state.indexed_to
        && hashes(bytes, slot_end, state.indexed_to) == (state.head_hash, state.tail_hash);
    if !intact {
        if state.unchanged(&identity) {
            return Expected::StateWrong(
                "its state says the file is unchanged, but the bytes indexed are not the file's"
                    .into(),
            );
        }
        return Expected::Changed;
    }
    let session = parse_prefix(&map, header, &first, kinds, state.indexed_to);
    Expected::Documents(session.documents)
}

/// Sort key of a document: every field, so equal documents sort together.
type DocKey = (
    u64,
    u64,
    u64,
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    bool,
    u64,
    Option<String>,
);

fn key(d: Document) -> DocKey {
    (
        d.offset,
        d.role.rank(),
        d.line,
        d.text,
        d.entry_id,
        d.timestamp_ms,
        d.model,
        d.active,
        d.edited.rank(),
        d.replacement,
    )
}

/// Count what `held` has beyond `want` and lacks of it.
fn compare(d: &mut FileDefects, want: Vec<Document>, held: Vec<Document>) {
    let mut want: BTreeMap<DocKey, u64> =
        want.into_iter().map(key).fold(BTreeMap::new(), |mut m, k| {
            *m.entry(k).or_default() += 1;
            m
        });
    let mut extra: Vec<DocKey> = Vec::new();
    for k in held.into_iter().map(key) {
        match want.get_mut(&k) {
            Some(n) if *n > 0 => *n -= 1,
            Some(_) => d.doubled += 1,
            None => extra.push(k),
        }
    }
    d.stale += extra.len() as u64;
    d.missing += want.values().sum::<u64>();
}

/// How many session records the index holds of each file.
fn record_counts(
    pi: &PiIndex,
    searcher: &tantivy::Searcher,
) -> Result<HashMap<String, u64>, IndexError> {
    let err = |e| tantivy_err(&pi.dir, e);
    let query = TermQuery::new(
        Term::from_field_text(pi.fields.doc_type, SESSION_DOC),
        IndexRecordOption::Basic,
    );
    let mut out = HashMap::new();
    let mut path = String::new();
    for a in searcher.search(&query, &DocSetCollector).map_err(err)? {
        let ff = searcher.segment_reader(a.segment_ord).fast_fields();
        let Some(file) = ff.str("file").map_err(err)? else {
            continue;
        };
        let ord = file.term_ords(a.doc_id).next();
        if let Some(ord) = ord {
            path.clear();
            file.ord_to_str(ord, &mut path).map_err(|e| err(e.into()))?;
            *out.entry(path.clone()).or_default() += 1;
        }
    }
    Ok(out)
}

/// How many message documents the index holds per session key.
fn message_counts(
    pi: &PiIndex,
    searcher: &tantivy::Searcher,
) -> Result<HashMap<u64, u64>, IndexError> {
    let err = |e| tantivy_err(&pi.dir, e);
    let query = crate::index::all_messages(&pi.fields);
    let mut by_segment: Vec<Vec<u32>> = vec![Vec::new(); searcher.segment_readers().len()];
    for a in searcher.search(&*query, &DocSetCollector).map_err(err)? {
        by_segment[a.segment_ord as usize].push(a.doc_id);
    }
    let mut out: HashMap<u64, u64> = HashMap::new();
    for (ord, docs) in by_segment.iter().enumerate() {
        let sess = searcher
            .segment_reader(ord as u32)
            .fast_fields()
            .u64("sess")
            .map_err(err)?;
        for &doc in docs {
            if let Some(k) = sess.first(doc) {
                *out.entry(k).or_default() += 1;
            }
        }
    }
    Ok(out)
}
