//! The index schema, in one place, with the reason for each option.
//!
//! One tantivy document per indexed piece of text (a user message, an
//! assistant reply, …). Every option costs something at build time or on
//! disk, so each field gets only what search, filters and `show` use:
//!
//! | field | options | why |
//! |---|---|---|
//! | `text` | tokenized with positions, stored | full-text search and phrases need positions; snippets and `show` need the text, and keeping it makes the index self-contained when session files move or vanish |
//! | `session_id` | raw term, stored | `session:ID` filters and `show ID` look it up by term (and by prefix through the term dictionary); printed from the stored value |
//! | `path` | raw term, stored | `show PATH`, and replacing or deleting one file's documents by term |
//! | `line` | stored | file order for `show` and `--around`, which read a session's stored documents and sort them |
//! | `offset` | stored, fast | printed; with `path`, names an entry's documents when a grown file moves them off or onto the active branch (a column costs a few bits per document, where an indexed unique term cost a term-dictionary entry and a posting list per document) |
//! | `entry_id` | stored | printed only |
//! | `role` | raw term, stored | `role:` filters |
//! | `timestamp` | date (ms), stored, fast | `after:`/`before:` ranges (tantivy runs a range query on the column when a field is fast) and sorting by time; not indexed: nearly every message has its own millisecond, and these terms with `entry_id`'s cost ~11% of a build's CPU for nothing |
//! | `model` | raw term, stored | `model:` filters |
//! | `cwd` | raw term, stored | `cwd:` filters (exact, and below a directory through the term dictionary) |
//! | `session_name` | stored | shown with hits; it changes when a session is renamed, so it is not a filter |
//! | `active` | bool, indexed, stored | `branch:active` filters (one term of two values) and marks |
//! | `started` | date (ms), stored | the session's start, shown in headings |
//! | `kind` | raw term | `session` on the one summary document per session file (messages carry none, which costs nothing per message); searches exclude it |
//! | `title` | stored | session documents: the first user message, for listings and headings |
//! | `messages` | u64 stored | session documents: how many documents the session has |
//! | `last` | date (ms), stored | session documents: the time of the session's last document |
//! | `file` | raw string, fast | session documents: the path again, as a column, so a build reads the state of 10,000 files without touching the doc store |
//! | `file_dev`, `file_ino`, `file_size`, `file_mtime_ns`, `indexed_to`, `head_hash`, `tail_hash` | u64, fast | session documents: what identifies the indexed state of the file, for incremental builds |
//!
//! Message documents carry the session fields that filters need
//! (`session_id`, `path`, `cwd`); what only describes the session (its
//! name, start, title, file state) lives on the session document alone, so
//! renaming a session or appending to it rewrites one document, not all.
//!
//! The text tokenizer is registered under [`TEXT_TOKENIZER`] every time an
//! index is opened; [`SCHEMA_VERSION`] changes whenever fields or
//! tokenization change, so `build` can tell an old index from a current one.

use tantivy::schema::{
    DateOptions, DateTimePrecision, Field, IndexRecordOption, NumericOptions, Schema,
    TextFieldIndexing, TextOptions, STORED, STRING,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Index;

/// Bumped whenever the schema or the tokenizer changes; an index written
/// under another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 6;

/// Name under which the text tokenizer is registered.
pub const TEXT_TOKENIZER: &str = "pi_text";

/// Handles to every field of the schema.
#[derive(Clone, Debug)]
pub struct Fields {
    /// The document's text.
    pub text: Field,
    /// The session id from the header.
    pub session_id: Field,
    /// The session file's absolute path.
    pub path: Field,
    /// 1-based line number of the entry.
    pub line: Field,
    /// Byte offset of the entry's line.
    pub offset: Field,
    /// The entry id (absent for version 1).
    pub entry_id: Field,
    /// Role: user, assistant, thinking, tool, summary, custom.
    pub role: Field,
    /// Entry time.
    pub timestamp: Field,
    /// Model that produced the message, or in effect.
    pub model: Field,
    /// The session's working directory.
    pub cwd: Field,
    /// The session's display name.
    pub session_name: Field,
    /// On the active branch?
    pub active: Field,
    /// Session start time.
    pub started: Field,
    /// `session` on session documents.
    pub kind: Field,
    /// Session documents: the first user message.
    pub title: Field,
    /// Session documents: number of documents.
    pub messages: Field,
    /// Session documents: time of the last document.
    pub last: Field,
    /// Session documents: the file path as a fast column.
    pub file: Field,
    /// Session documents: device of the file.
    pub file_dev: Field,
    /// Session documents: inode of the file.
    pub file_ino: Field,
    /// Session documents: size of the file when indexed.
    pub file_size: Field,
    /// Session documents: modification time, ns since the epoch.
    pub file_mtime_ns: Field,
    /// Session documents: bytes of complete lines indexed.
    pub indexed_to: Field,
    /// Session documents: hash of the first bytes of the file.
    pub head_hash: Field,
    /// Session documents: hash of the bytes before `indexed_to`.
    pub tail_hash: Field,
}

/// The `kind` value of session documents.
pub const SESSION_KIND: &str = "session";

impl Fields {
    /// Build the schema and return it with its field handles.
    pub fn build() -> (Schema, Fields) {
        let mut b = Schema::builder();
        let text = b.add_text_field(
            "text",
            TextOptions::default().set_stored().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(TEXT_TOKENIZER)
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            ),
        );
        let session_id = b.add_text_field("session_id", STRING | STORED);
        let path = b.add_text_field("path", STRING | STORED);
        let line = b.add_u64_field("line", STORED);
        let offset = b.add_u64_field("offset", NumericOptions::default().set_stored().set_fast());
        let entry_id = b.add_text_field("entry_id", STORED);
        let role = b.add_text_field("role", STRING | STORED);
        let ms = DateOptions::default().set_precision(DateTimePrecision::Milliseconds);
        let timestamp = b.add_date_field("timestamp", ms.clone().set_stored().set_fast());
        let model = b.add_text_field("model", STRING | STORED);
        let cwd = b.add_text_field("cwd", STRING | STORED);
        let session_name = b.add_text_field("session_name", STORED);
        let active = b.add_bool_field(
            "active",
            NumericOptions::default().set_indexed().set_stored(),
        );
        let started = b.add_date_field("started", ms.clone().set_stored());
        let kind = b.add_text_field("kind", STRING);
        let title = b.add_text_field("title", STORED);
        let messages = b.add_u64_field("messages", STORED);
        let last = b.add_date_field("last", ms.set_stored());
        let file = b.add_text_field(
            "file",
            tantivy::schema::TextOptions::default().set_fast("raw"),
        );
        let fast = NumericOptions::default().set_fast();
        let file_dev = b.add_u64_field("file_dev", fast.clone());
        let file_ino = b.add_u64_field("file_ino", fast.clone());
        let file_size = b.add_u64_field("file_size", fast.clone());
        let file_mtime_ns = b.add_u64_field("file_mtime_ns", fast.clone());
        let indexed_to = b.add_u64_field("indexed_to", fast.clone());
        let head_hash = b.add_u64_field("head_hash", fast.clone());
        let tail_hash = b.add_u64_field("tail_hash", fast);
        (
            b.build(),
            Fields {
                text,
                session_id,
                path,
                line,
                offset,
                entry_id,
                role,
                timestamp,
                model,
                cwd,
                session_name,
                active,
                started,
                kind,
                title,
                messages,
                last,
                file,
                file_dev,
                file_ino,
                file_size,
                file_mtime_ns,
                indexed_to,
                head_hash,
                tail_hash,
            },
        )
    }

    /// Field handles of an opened index, checking that its schema is ours.
    pub fn of(schema: &Schema) -> Option<Fields> {
        let (ours, fields) = Fields::build();
        (ours == *schema).then_some(fields)
    }
}

/// The text analyzer: the code-aware tokenizer of [`super::tokenizer`]
/// (prose words, identifiers whole and by parts, CJK per character,
/// lower-cased and folded to ASCII, tokens over 100 bytes dropped).
pub fn text_analyzer() -> TextAnalyzer {
    super::tokenizer::analyzer()
}

/// Register the tokenizers the schema names on an opened or new index.
pub fn register_tokenizers(index: &Index) {
    index.tokenizers().register(TEXT_TOKENIZER, text_analyzer());
}
