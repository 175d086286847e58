//! The index schema, in one place, with the reason for each option.
//!
//! Two kinds of documents share one index, so that a build commits them
//! together: one **message** document per indexed piece of text (a user
//! message, an assistant reply, …), and one **session** document per
//! session file, with what describes the session (its id, file, directory,
//! name, models, file state). A message carries only what is its own, plus
//! the session's *key* (a 64-bit hash of its file's path) that joins it to
//! its session: filters on session facts (`cwd:`, `session:`, `name:`)
//! find the matching session documents first and then keep the messages
//! with those keys, and a hit is printed with its session's facts read
//! from its session document. Renaming a session or appending to it
//! rewrites one session document, not every message.
//!
//! Each option costs something at build time or on disk, so each field
//! gets only what search, filters and `show` use: every session field
//! on every message (the schema before this one) cost more indexing CPU
//! than messages that carry only their own fields
//! ([docs/performance.md](../../docs/performance.md#indexing)).
//!
//! | field | on | options | why |
//! |---|---|---|---|
//! | `text` | messages | tokenized with positions, stored | full-text search and phrases need positions; snippets and `show` need the text, and keeping it makes the index self-contained when session files move or vanish |
//! | `sess` | both | u64, fast | the session's key: filters on session facts keep messages by it (a column scan), and one range on it removes every document of a file |
//! | `role` | messages | u64 (the role's rank), fast | printing |
//! | `role_term` | messages | the role's name as one term, with frequencies, no field norms, not stored | `role:` filters: the term's postings intersect a word's, and tantivy skips the blocks of both that cannot reach the page (a range on the `role` column was checked document by document: a third of a filtered search) |
//! | `timestamp` | messages | date (ms), fast | `after:`/`before:` ranges and sorting by time run on the column; not indexed: nearly every message has its own millisecond, and those terms cost build CPU for nothing |
//! | `active` | messages | u64 (1 on the active branch), fast | `branch:active` filters and marks (a range on the column: tantivy has no range on a boolean column) |
//! | `offset` | messages | u64, fast | printed; with `sess`, names an entry's documents when a grown file moves them off or onto the active branch |
//! | `model` | messages | u64 (a hash of the model's name, 0 for none), fast | `model:` filters, which find the matching names among the sessions' `models` and keep messages by their hashes; printed through the session's names |
//! | `line` | messages | stored | file order for `show` and `--around` |
//! | `entry_id` | messages | stored | printed only |
//! | `edited` | messages | u64 (0 none, 1 omitted, 2 replaced), fast, only when not 0 | the `edited` mark of `show` and `--json`: what Pi 1.6's `context_edit` did to the message for the model; rare, so the column is sparse |
//! | `replacement` | messages | tokenized with positions, stored, only when replaced | the text the model is sent instead of the message: searched with `text` (a hit is the message the user saw), shown by `show` |
//! | `doc_type` | sessions | raw term | `session` on session documents; searches exclude them |
//! | `session_key` | sessions | u64, indexed and fast | a message's session document, looked up by its key; as a column of session documents alone, what families read for every session (the `sess` column spans every message: reading it at each session document touched a page per session) |
//! | `session_id` | sessions | raw term, stored, fast (raw) | `session:ID` filters and `show ID` (by term, and by prefix through the term dictionary); the column is what a report of what Pi cost reads |
//! | `path` | sessions | raw term, stored | `show PATH`; a file's session document by term |
//! | `cwd` | sessions | raw term, stored, fast (raw) | `cwd:` filters (exact, and below a directory through the term dictionary); the column is what a report of what Pi cost reads |
//! | `session_name` | sessions | tokenized, stored, fast (raw) | the name a user gave the session: `name:` filters search it, hits show it; the column is what a report of what Pi cost reads |
//! | `agent` | sessions | raw term, stored | which agent wrote the session (`pi`, `omp`: [`crate::pi::Agent`]): printed with hits, and the command that resumes it |
//! | `models` | sessions | raw terms, stored | every model the session's messages name: the dictionary `model:` fragments are matched against, and the names printed |
//! | `title` | sessions | tokenized with positions, stored | the first user message, for listings and headings, and what `sessions QUERY` ranks besides the name |
//! | `root` | sessions | raw string, fast | the session directory (or file) the build found it under, so a later build that does not read that directory can say whose sessions it kept |
//! | `messages` | sessions | u64 stored | how many documents the session has |
//! | `started`, `last` | sessions | date (ms), stored (`started` also fast) | the session's start and its last document's time; a family is ordered by its members' starts |
//! | `copy` | messages | u64 (a hash of entry id and text, [`super::lineage::copy_key`]), fast, only with an entry id | one message copied into forks is one hit: matches are merged by it within a family |
//! | `parent` | sessions | raw term, stored, only when the header names one | the `parentSession` (v1 `branchedFrom`) path, printed when the parent is not indexed |
//! | `parent_key` | sessions | u64 (the parent path's session key), fast, only with a parent | families are resolved from columns, without reading the doc store |
//! | `id_hash`, `parent_id_hash` | sessions | u64 (hashes of the header id and of the parent's id: the one in its file's name, or the id itself where Oh My Pi names the parent by id, [`super::lineage::parent_id`]), fast | a parent that moved, or is named by its id, is found from columns alone |
//! | `head` | sessions | u64 (the first message's copy key), fast and stored | older forks without `parentSession` begin with their parent's first entries: the same head |
//! | `file` | sessions | raw string, fast | the path again, as a column, so a build reads the state of 10,000 files without touching the doc store |
//! | `file_dev`, `file_ino`, `file_size`, `file_mtime_ns`, `indexed_to`, `head_hash`, `tail_hash` | sessions | u64, fast | what identifies the indexed state of the file, for incremental builds |
//! | `usage` | sessions | text (ASCII), fast (raw), not indexed, not stored | what each entry that records usage cost ([`crate::pi::usage`]), encoded by [`super::spent`]: one value per session. A report reads it with the session's key, file, id, directory and name from their columns, without the doc store, whose blocks hold messages too; identical values (the files of a copied folder) are one dictionary entry, read once ([docs/performance.md](../../docs/performance.md#what-pi-cost)) |
//! | `usage_sums` | sessions | text (ASCII), fast (raw), not indexed, not stored | the same entries summed by quarter hour and model ([`super::spent::Sums`]; none when an entry has a fault or a time outside 2000 to 2200): what a report reads for a session outside a family instead of its rows ([docs/performance.md](../../docs/performance.md#sums-by-quarter-hour)) |
//!
//! The text tokenizer is registered under [`TEXT_TOKENIZER`] every time an
//! index is opened; [`SCHEMA_VERSION`] changes whenever fields or
//! tokenization change, so `build` can tell an old index from a current one.

use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, NumericOptions, Schema,
    TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Index;

use super::state::fnv1a;

/// Bumped whenever the schema or the tokenizer changes; an index written
/// under another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 18;

/// Name under which the text tokenizer is registered.
pub const TEXT_TOKENIZER: &str = "pi_text";

/// The `doc_type` value of session documents ("kind" is the name of
/// what a build includes: [`crate::pi::Kinds`]).
pub const SESSION_DOC: &str = "session";

/// The fast column that orders messages by time (and breaks ties of
/// score).
pub const RECENCY: &str = "timestamp";

/// Handles to every field of the schema.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    /// Messages: the text.
    pub text: Field,
    /// Both: the session's key ([`session_key`]).
    pub sess: Field,
    /// Messages: the role's rank ([`crate::pi::Role::rank`]).
    pub role: Field,
    /// Messages: the entry's time.
    pub timestamp: Field,
    /// Messages: on the active branch?
    pub active: Field,
    /// Messages: byte offset of the entry's line.
    pub offset: Field,
    /// Messages: hash of the model's name ([`model_hash`]).
    pub model: Field,
    /// Messages: 1-based line number of the entry.
    pub line: Field,
    /// Messages: the entry id (absent for version 1).
    pub entry_id: Field,
    /// Sessions: `session`.
    pub doc_type: Field,
    /// Sessions: the key again, indexed.
    pub session_key: Field,
    /// Sessions: the session id from the header.
    pub session_id: Field,
    /// Sessions: the session file's absolute path.
    pub path: Field,
    /// Sessions: the working directory.
    pub cwd: Field,
    /// Sessions: the display name.
    pub session_name: Field,
    /// Sessions: every model the messages name.
    pub models: Field,
    /// Sessions: the first user message.
    pub title: Field,
    /// Sessions: number of documents.
    pub messages: Field,
    /// Sessions: start time.
    pub started: Field,
    /// Sessions: time of the last document.
    pub last: Field,
    /// Sessions: the file path as a fast column.
    pub file: Field,
    /// Sessions: device of the file.
    pub file_dev: Field,
    /// Sessions: inode of the file.
    pub file_ino: Field,
    /// Sessions: size of the file when indexed.
    pub file_size: Field,
    /// Sessions: modification time, ns since the epoch.
    pub file_mtime_ns: Field,
    /// Sessions: bytes of complete lines indexed.
    pub indexed_to: Field,
    /// Sessions: hash of the first bytes of the file.
    pub head_hash: Field,
    /// Sessions: hash of the bytes before `indexed_to`.
    pub tail_hash: Field,
    /// Messages: the edit mark ([`crate::pi::Edited::rank`]).
    pub edited: Field,
    /// Messages: the text the model is sent instead.
    pub replacement: Field,
    /// Sessions: the root the file was found under.
    pub root: Field,
    /// Messages: the copy key ([`super::lineage::copy_key`]).
    pub copy: Field,
    /// Sessions: the parent session's path, as the header names it.
    pub parent: Field,
    /// Sessions: the session key of that path.
    pub parent_key: Field,
    /// Sessions: the copy key of the first message with an entry id.
    pub head: Field,
    /// Sessions: [`super::lineage::id_hash`] of the header id.
    pub id_hash: Field,
    /// Sessions: [`super::lineage::id_hash`] of the parent's id
    /// ([`super::lineage::parent_id`]).
    pub parent_id_hash: Field,
    /// Messages: the role's name ([`crate::pi::Role::as_str`]) as one
    /// term, for `role:` filters.
    pub role_term: Field,
    /// Sessions: the agent that wrote it ([`crate::pi::Agent::as_str`]).
    pub agent: Field,
    /// Sessions: what each entry that records usage cost ([`super::spent`]).
    pub usage: Field,
    /// Sessions: the same summed by quarter hour and bucket
    /// ([`super::spent::Sums`]).
    pub usage_sums: Field,
}

/// The key that joins a session file's messages to its session document:
/// a 64-bit hash of the path (stable across builds and releases; a
/// collision between two of a user's paths is a 1 in 10^14 chance at
/// 100,000 files).
pub fn session_key(path: &str) -> u64 {
    fnv1a(path.as_bytes())
}

/// The value of a message's `model` column: a hash of the model's name, 0
/// for none.
pub fn model_hash(model: Option<&str>) -> u64 {
    model.map_or(0, |m| fnv1a(m.as_bytes()).max(1))
}

impl Fields {
    /// Build the schema and return it with its field handles.
    pub fn build() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let tokenized = |stored: bool| {
            let o = TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TEXT_TOKENIZER)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            );
            if stored {
                o.set_stored()
            } else {
                o
            }
        };
        let fast = || NumericOptions::default().set_fast();
        let ms = DateOptions::default().set_precision(DateTimePrecision::Milliseconds);
        let fields = Fields {
            text: b.add_text_field("text", tokenized(true)),
            sess: b.add_u64_field("sess", fast()),
            role: b.add_u64_field("role", fast()),
            timestamp: b.add_date_field("timestamp", ms.clone().set_fast()),
            active: b.add_u64_field("active", fast()),
            offset: b.add_u64_field("offset", fast()),
            model: b.add_u64_field("model", fast()),
            line: b.add_u64_field("line", STORED),
            entry_id: b.add_text_field("entry_id", STORED),
            doc_type: b.add_text_field("doc_type", STRING),
            session_key: b.add_u64_field("session_key", INDEXED | FAST),
            session_id: b.add_text_field("session_id", (STRING | STORED).set_fast("raw")),
            path: b.add_text_field("path", STRING | STORED),
            cwd: b.add_text_field("cwd", (STRING | STORED).set_fast("raw")),
            session_name: b.add_text_field("session_name", tokenized(true).set_fast("raw")),
            models: b.add_text_field("models", STRING | STORED),
            title: b.add_text_field("title", tokenized(true)),
            messages: b.add_u64_field("messages", STORED),
            started: b.add_date_field("started", ms.clone().set_stored().set_fast()),
            last: b.add_date_field("last", ms.set_stored()),
            file: b.add_text_field("file", TextOptions::default().set_fast("raw")),
            file_dev: b.add_u64_field("file_dev", fast()),
            file_ino: b.add_u64_field("file_ino", fast()),
            file_size: b.add_u64_field("file_size", fast()),
            file_mtime_ns: b.add_u64_field("file_mtime_ns", fast()),
            indexed_to: b.add_u64_field("indexed_to", fast()),
            head_hash: b.add_u64_field("head_hash", fast()),
            tail_hash: b.add_u64_field("tail_hash", fast()),
            edited: b.add_u64_field("edited", fast()),
            replacement: b.add_text_field("replacement", tokenized(true)),
            root: b.add_text_field("root", TextOptions::default().set_fast("raw")),
            copy: b.add_u64_field("copy", fast()),
            parent: b.add_text_field("parent", STRING | STORED),
            parent_key: b.add_u64_field("parent_key", fast()),
            head: b.add_u64_field("head", fast().set_stored()),
            id_hash: b.add_u64_field("id_hash", fast()),
            parent_id_hash: b.add_u64_field("parent_id_hash", fast()),
            role_term: b.add_text_field(
                "role_term",
                TextOptions::default().set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer("raw")
                        .set_index_option(IndexRecordOption::WithFreqs)
                        .set_fieldnorms(false),
                ),
            ),
            agent: b.add_text_field("agent", STRING | STORED),
            usage: b.add_text_field("usage", TextOptions::default().set_fast("raw")),
            usage_sums: b.add_text_field("usage_sums", TextOptions::default().set_fast("raw")),
        };
        (b.build(), fields)
    }

    /// The handles of the schema's fields (the same for every index of this
    /// schema: a field's handle is its position in the schema).
    pub fn get() -> &'static Fields {
        static FIELDS: std::sync::OnceLock<Fields> = std::sync::OnceLock::new();
        FIELDS.get_or_init(|| Fields::build().1)
    }

    /// Field handles of an opened index, checking that its schema is ours.
    pub fn of(schema: &Schema) -> Option<Fields> {
        let (ours, fields) = Fields::build();
        (ours == *schema).then_some(fields)
    }
}

/// The text analyzer: the code-aware tokenizer of [`super::tokenizer`]
/// (prose words, identifiers by their parts, CJK per character,
/// lower-cased and folded to ASCII, tokens over 100 bytes dropped).
pub fn text_analyzer() -> TextAnalyzer {
    super::tokenizer::analyzer()
}

/// Register the tokenizers the schema names on an opened or new index.
pub fn register_tokenizers(index: &Index) {
    index.tokenizers().register(TEXT_TOKENIZER, text_analyzer());
}
