//! Documents in: one writer per build, one commit at the end.
//!
//! `add_session` may be called from many threads at once: tantivy's
//! `IndexWriter::add_document` only queues the document for tantivy's own
//! indexing threads, so parsing (on rayon's threads) and indexing overlap.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use tantivy::schema::Schema;
use tantivy::{DateTime, Index, IndexWriter, TantivyDocument};

use super::schema::{register_tokenizers, Fields, SESSION_KIND};
#[allow(unused)]
fn wt(d: usize) -> usize {
    std::env::var("PIX_WT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}
use super::{tantivy_err, BuildInfo, IndexError, PiIndex, SCHEMA_VERSION, TOOL};
use crate::pi::{Document, Role};

/// Session-level facts stored with each of its documents.
#[derive(Clone, Debug)]
pub struct SessionMeta<'a> {
    /// Session id from the header.
    pub id: &'a str,
    /// Absolute path of the session file.
    pub path: &'a str,
    /// Working directory.
    pub cwd: Option<&'a str>,
    /// Display name.
    pub name: Option<&'a str>,
    /// Session start, epoch milliseconds.
    pub started_ms: Option<i64>,
}

/// Why a build starts from an empty index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fresh {
    /// There was no index.
    New,
    /// The index was written by another schema version.
    SchemaChanged,
    /// The index existed and is being rebuilt.
    Rebuild,
}

/// Writes one build's documents.
pub struct IndexBuilder {
    pi: PiIndex,
    writer: IndexWriter<TantivyDocument>,
    documents: AtomicU64,
    sessions: AtomicU64,
    /// How the index was found.
    pub fresh: Fresh,
}

/// How much memory tantivy's indexing threads may use before flushing a
/// segment, at least. tantivy refuses less than 15 MB per thread.
pub const MIN_THREAD_BUDGET: usize = 15_000_000;

impl IndexBuilder {
    /// Open the index at `dir` for a full build, creating it if needed and
    /// recreating it if it was written by another schema. `threads` indexing
    /// threads share `memory_budget` bytes.
    pub fn create(
        dir: &Path,
        threads: usize,
        memory_budget: usize,
    ) -> Result<IndexBuilder, IndexError> {
        let io = |source| IndexError::Io {
            path: dir.to_owned(),
            source,
        };
        let (schema, fields) = Fields::build();
        let fresh;
        let index = if dir.join("meta.json").exists() {
            match open_ours(dir, &schema)? {
                Some(index) => {
                    fresh = Fresh::Rebuild;
                    index
                }
                None => {
                    clear_dir(dir).map_err(io)?;
                    fresh = Fresh::SchemaChanged;
                    create(dir, schema)?
                }
            }
        } else {
            std::fs::create_dir_all(dir).map_err(io)?;
            if std::fs::read_dir(dir).map_err(io)?.next().is_some() {
                return Err(IndexError::Foreign(dir.to_owned()));
            }
            fresh = Fresh::New;
            create(dir, schema)?
        };
        register_tokenizers(&index);
        let threads = wt(threads.max(1));
        let budget = memory_budget.max(threads * MIN_THREAD_BUDGET);
        let writer = index
            .writer_with_num_threads(threads, budget)
            .map_err(|e| tantivy_err(dir, e))?;
        writer
            .delete_all_documents()
            .map_err(|e| tantivy_err(dir, e))?;
        Ok(IndexBuilder {
            pi: PiIndex {
                index,
                fields,
                dir: dir.to_owned(),
            },
            writer,
            documents: AtomicU64::new(0),
            sessions: AtomicU64::new(0),
            fresh,
        })
    }

    /// Queue every document of one session.
    pub fn add_session(&self, meta: &SessionMeta<'_>, docs: &[Document]) -> Result<(), IndexError> {
        let f = &self.pi.fields;
        for d in docs {
            let mut doc = TantivyDocument::new();
            doc.add_text(f.text, &d.text);
            doc.add_text(f.session_id, meta.id);
            doc.add_text(f.path, meta.path);
            doc.add_u64(f.line, d.line);
            doc.add_u64(f.offset, d.offset);
            if let Some(id) = &d.entry_id {
                doc.add_text(f.entry_id, id);
            }
            doc.add_text(f.role, d.role.as_str());
            if let Some(ms) = d.timestamp_ms {
                doc.add_date(f.timestamp, DateTime::from_timestamp_millis(ms));
            }
            if let Some(m) = &d.model {
                doc.add_text(f.model, m);
            }
            if let Some(cwd) = meta.cwd {
                doc.add_text(f.cwd, cwd);
            }
            if let Some(name) = meta.name {
                doc.add_text(f.session_name, name);
            }
            doc.add_bool(f.active, d.active);
            if let Some(ms) = meta.started_ms {
                doc.add_date(f.started, DateTime::from_timestamp_millis(ms));
            }
            self.writer
                .add_document(doc)
                .map_err(|e| tantivy_err(&self.pi.dir, e))?;
        }
        self.writer
            .add_document(session_document(f, meta, docs))
            .map_err(|e| tantivy_err(&self.pi.dir, e))?;
        self.documents
            .fetch_add(docs.len() as u64, Ordering::Relaxed);
        self.sessions.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Commit everything queued, with the build's record, and wait for
    /// merges to finish so the index is compact when the build returns.
    pub fn commit(mut self, kinds: &str, now_ms: i64) -> Result<BuildInfo, IndexError> {
        let info = BuildInfo {
            tool: TOOL.into(),
            schema_version: SCHEMA_VERSION,
            kinds: kinds.into(),
            built_at_ms: now_ms,
            sessions: self.sessions.load(Ordering::Relaxed),
            documents: self.documents.load(Ordering::Relaxed),
        };
        let dir = self.pi.dir.clone();
        let payload = serde_json::to_string(&info).expect("build info serializes");
        let mut prepared = self
            .writer
            .prepare_commit()
            .map_err(|e| tantivy_err(&dir, e))?;
        prepared.set_payload(&payload);
        prepared.commit().map_err(|e| tantivy_err(&dir, e))?;
        self.writer
            .wait_merging_threads()
            .map_err(|e| tantivy_err(&dir, e))?;
        Ok(info)
    }
}

/// The summary document of one session file: what listings and search
/// headings show without reading any message.
fn session_document(f: &Fields, meta: &SessionMeta<'_>, docs: &[Document]) -> TantivyDocument {
    let mut doc = TantivyDocument::new();
    doc.add_text(f.kind, SESSION_KIND);
    doc.add_text(f.session_id, meta.id);
    doc.add_text(f.path, meta.path);
    if let Some(cwd) = meta.cwd {
        doc.add_text(f.cwd, cwd);
    }
    if let Some(name) = meta.name {
        doc.add_text(f.session_name, name);
    }
    if let Some(ms) = meta.started_ms {
        doc.add_date(f.started, DateTime::from_timestamp_millis(ms));
    }
    if let Some(first) = docs.iter().find(|d| d.role == Role::User) {
        doc.add_text(f.title, title_of(&first.text));
    }
    doc.add_u64(f.messages, docs.len() as u64);
    if let Some(ms) = docs
        .iter()
        .filter_map(|d| d.timestamp_ms)
        .max()
        .or(meta.started_ms)
    {
        doc.add_date(f.last, DateTime::from_timestamp_millis(ms));
    }
    doc
}

/// The first line of a message, at most 200 characters: a session's title.
pub fn title_of(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// Create a new index. The doc store is not compressed: stored text is
/// only ~5-8% of the session bytes, and skipping lz4 saved ~5% of a build's
/// CPU (measured with perf on a 256 MB corpus) for an index ~2x larger on
/// disk in its store files; reading stored documents gets faster too.
fn create(dir: &Path, schema: Schema) -> Result<Index, IndexError> {
    let settings = tantivy::IndexSettings {
        docstore_compression: tantivy::store::Compressor::None,
        ..Default::default()
    };
    Index::builder()
        .schema(schema)
        .settings(settings)
        .create_in_dir(dir)
        .map_err(|e| tantivy_err(dir, e))
}

/// Open the index at `dir` if it is ours and current. `Ok(None)` means it
/// is ours but of another schema version; an index that is not ours is an
/// error, so a user's directory is never wiped by mistake.
fn open_ours(dir: &Path, schema: &Schema) -> Result<Option<Index>, IndexError> {
    let index = match Index::open_in_dir(dir) {
        Ok(index) => index,
        Err(e) => return Err(tantivy_err(dir, e)),
    };
    let payload: Option<BuildInfo> = index
        .load_metas()
        .ok()
        .and_then(|m| m.payload)
        .and_then(|p| serde_json::from_str(&p).ok());
    let same_schema = index.schema() == *schema;
    match payload {
        Some(info) if info.tool == TOOL => {
            if same_schema && info.schema_version == SCHEMA_VERSION {
                Ok(Some(index))
            } else {
                Ok(None)
            }
        }
        // Created by us but never committed (a build that died early).
        None if same_schema => Ok(Some(index)),
        _ => Err(IndexError::Foreign(dir.to_owned())),
    }
}

/// Remove the files of an index of ours, leaving the directory.
fn clear_dir(dir: &Path) -> std::io::Result<()> {
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
