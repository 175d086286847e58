//! The documents handed to tantivy, as our own type: a message owns the
//! [`Document`] the format stage extracted and lends tantivy its fields as
//! borrowed values, so nothing is copied into a `TantivyDocument` on the
//! way into the segment writer (tantivy's [`tantivy::schema::Document`]
//! trait is made for this). The fields are listed by an iterator over a
//! fixed order, with no allocation per document.

use tantivy::schema::document::{ReferenceValue, ReferenceValueLeaf};
use tantivy::schema::{Field, Value};
use tantivy::DateTime;

use super::schema::{model_hash, Fields, SESSION_DOC};
use super::state::FileState;
use crate::pi::Document;

/// A document of the index.
#[derive(Debug)]
pub enum PiDoc {
    /// A piece of text of one session.
    Message(MessageDoc),
    /// A session's record.
    Session(Box<SessionDoc>),
}

/// A message document: the extracted document and its session's key.
#[derive(Debug)]
pub struct MessageDoc {
    pub(super) sess: u64,
    pub(super) doc: Document,
    /// The values derived from the document, worked out once: tantivy
    /// walks a document's fields once for each of its writers
    /// ([docs/performance.md](../../docs/performance.md#paying-for-usage)).
    derived: Derived,
}

/// What [`message_field`] lends that is worked out from a message's
/// document rather than held in it.
#[derive(Debug)]
struct Derived {
    /// [`model_hash`] of its model.
    model: u64,
    /// Its copy key ([`super::lineage::copy_key`]), when it has an entry id.
    copy: Option<u64>,
    /// How many fields it lends.
    fields: u8,
}

impl PiDoc {
    /// The bytes of text the document holds, about: what a thread holding
    /// documents back counts against its budget.
    pub fn text_len(&self) -> usize {
        match self {
            PiDoc::Message(m) => {
                m.doc.text.len() + m.doc.replacement.as_ref().map_or(0, String::len) + 64
            }
            PiDoc::Session(s) => {
                s.path.len()
                    + s.title.as_ref().map_or(0, String::len)
                    + 256
                    + s.usage.iter().map(String::len).sum::<usize>()
                    + s.usage_sums.iter().map(String::len).sum::<usize>()
            }
        }
    }
}

impl MessageDoc {
    /// The document `doc` of the session with key `sess`.
    pub fn new(sess: u64, doc: Document) -> MessageDoc {
        let copy = doc
            .entry_id
            .as_deref()
            .map(|id| super::lineage::copy_key(id, &doc.text));
        let present = [
            doc.timestamp_ms.is_some(),
            doc.entry_id.is_some(),
            doc.edited != crate::pi::Edited::No,
            doc.replacement.is_some(),
            copy.is_some(),
        ];
        let derived = Derived {
            model: model_hash(doc.model.as_deref()),
            copy,
            fields: MESSAGE_FIELDS_ALWAYS + present.iter().filter(|&&p| p).count() as u8,
        };
        let m = MessageDoc { sess, doc, derived };
        // The count is [`message_field`]'s, kept apart to save a walk.
        debug_assert_eq!(
            usize::from(m.derived.fields),
            (0..)
                .map_while(|at| message_field(&m, at))
                .filter(Option::is_some)
                .count()
        );
        m
    }
}

/// A session document, owned.
#[derive(Debug)]
pub struct SessionDoc {
    pub(super) sess: u64,
    pub(super) id: String,
    pub(super) path: String,
    pub(super) cwd: Option<String>,
    pub(super) name: Option<String>,
    pub(super) models: Vec<String>,
    pub(super) title: Option<String>,
    pub(super) messages: u64,
    pub(super) started_ms: Option<i64>,
    pub(super) last_ms: Option<i64>,
    pub(super) state: FileState,
    pub(super) root: Option<String>,
    /// The parent's path, as the header names it.
    pub(super) parent: Option<String>,
    /// [`super::lineage::head_of`] the session's documents.
    pub(super) head: u64,
    /// The agent that wrote it.
    pub(super) agent: crate::pi::Agent,
    /// What each entry that records usage spent ([`super::spent`]'s
    /// value, in its chunks; none: nothing).
    pub(super) usage: Vec<String>,
    /// The same summed ([`super::spent::Sums`], in its chunks; none:
    /// nothing, or rows that cannot be summed).
    pub(super) usage_sums: Vec<String>,
}

/// A value lent to tantivy.
#[derive(Clone, Debug)]
pub enum PiValue<'a> {
    /// Text (tokenized or raw, as the field says).
    Str(&'a str),
    /// A number.
    U64(u64),
    /// A time.
    Date(DateTime),
}

impl<'a> Value<'a> for PiValue<'a> {
    type ArrayIter = std::iter::Empty<Self>;
    type ObjectIter = std::iter::Empty<(&'a str, Self)>;

    #[inline]
    fn as_value(&self) -> ReferenceValue<'a, Self> {
        ReferenceValue::Leaf(match *self {
            PiValue::Str(s) => ReferenceValueLeaf::Str(s),
            PiValue::U64(v) => ReferenceValueLeaf::U64(v),
            PiValue::Date(v) => ReferenceValueLeaf::Date(v),
        })
    }
}

fn date(ms: i64) -> DateTime {
    DateTime::from_timestamp_millis(ms)
}

/// The fields of one document, in a fixed order; absent values skipped.
pub struct PiFields<'a> {
    doc: &'a PiDoc,
    at: usize,
    /// How many are left to lend: tantivy collects them, and a collection
    /// that knows its length is made once, not grown.
    left: usize,
}

impl<'a> Iterator for PiFields<'a> {
    type Item = (Field, PiValue<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let at = self.at;
            self.at += 1;
            let item = match self.doc {
                PiDoc::Message(m) => message_field(m, at)?,
                PiDoc::Session(s) => session_field(s, at)?,
            };
            if let Some(item) = item {
                self.left = self.left.saturating_sub(1);
                return Some(item);
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for PiFields<'_> {}

/// How many fields every message lends ([`message_field`]: the text, its
/// session, role, active flag, offset, model, line and role term).
const MESSAGE_FIELDS_ALWAYS: u8 = 8;

/// The `at`th field of a message: `None` past the last, `Some(None)` when
/// absent.
#[inline]
fn message_field(m: &MessageDoc, at: usize) -> Option<Option<(Field, PiValue<'_>)>> {
    let f = Fields::get();
    let d = &m.doc;
    Some(match at {
        0 => Some((f.text, PiValue::Str(&d.text))),
        1 => Some((f.sess, PiValue::U64(m.sess))),
        2 => Some((f.role, PiValue::U64(d.role.rank()))),
        3 => d
            .timestamp_ms
            .map(|ms| (f.timestamp, PiValue::Date(date(ms)))),
        4 => Some((f.active, PiValue::U64(u64::from(d.active)))),
        5 => Some((f.offset, PiValue::U64(d.offset))),
        6 => Some((f.model, PiValue::U64(m.derived.model))),
        7 => Some((f.line, PiValue::U64(d.line))),
        8 => d
            .entry_id
            .as_deref()
            .map(|id| (f.entry_id, PiValue::Str(id))),
        // Rare: written only when there is something to say.
        9 => (d.edited != crate::pi::Edited::No).then(|| (f.edited, PiValue::U64(d.edited.rank()))),
        10 => d
            .replacement
            .as_deref()
            .map(|r| (f.replacement, PiValue::Str(r))),
        // Only messages with an entry id can be copied into a fork.
        11 => m.derived.copy.map(|key| (f.copy, PiValue::U64(key))),
        12 => Some((f.role_term, PiValue::Str(d.role.as_str()))),
        _ => return None,
    })
}

/// The `at`th field of a session document (its models come last, one
/// value each).
fn session_field(s: &SessionDoc, at: usize) -> Option<Option<(Field, PiValue<'_>)>> {
    let f = Fields::get();
    let st = &s.state;
    Some(match at {
        0 => Some((f.doc_type, PiValue::Str(SESSION_DOC))),
        1 => Some((f.sess, PiValue::U64(s.sess))),
        2 => Some((f.session_key, PiValue::U64(s.sess))),
        3 => Some((f.session_id, PiValue::Str(&s.id))),
        4 => Some((f.path, PiValue::Str(&s.path))),
        5 => Some((f.file, PiValue::Str(&s.path))),
        6 => s.cwd.as_deref().map(|c| (f.cwd, PiValue::Str(c))),
        7 => s.name.as_deref().map(|n| (f.session_name, PiValue::Str(n))),
        8 => s.title.as_deref().map(|t| (f.title, PiValue::Str(t))),
        9 => Some((f.messages, PiValue::U64(s.messages))),
        10 => s.started_ms.map(|ms| (f.started, PiValue::Date(date(ms)))),
        11 => s
            .last_ms
            .or(s.started_ms)
            .map(|ms| (f.last, PiValue::Date(date(ms)))),
        12 => Some((f.file_dev, PiValue::U64(st.dev))),
        13 => Some((f.file_ino, PiValue::U64(st.ino))),
        14 => Some((f.file_size, PiValue::U64(st.size))),
        15 => Some((f.file_mtime_ns, PiValue::U64(st.mtime_ns))),
        16 => Some((f.indexed_to, PiValue::U64(st.indexed_to))),
        17 => Some((f.head_hash, PiValue::U64(st.head_hash))),
        18 => Some((f.tail_hash, PiValue::U64(st.tail_hash))),
        19 => s.root.as_deref().map(|r| (f.root, PiValue::Str(r))),
        20 => s.parent.as_deref().map(|p| (f.parent, PiValue::Str(p))),
        21 => s
            .parent
            .as_deref()
            .map(|p| (f.parent_key, PiValue::U64(super::schema::session_key(p)))),
        22 => Some((f.head, PiValue::U64(s.head))),
        23 => Some((f.id_hash, PiValue::U64(super::lineage::id_hash(&s.id)))),
        24 => s
            .parent
            .as_deref()
            .and_then(super::lineage::parent_id)
            .map(|id| (f.parent_id_hash, PiValue::U64(super::lineage::id_hash(id)))),
        25 => Some((f.agent, PiValue::Str(s.agent.as_str()))),
        n if n - 26 < s.models.len() => Some((f.models, PiValue::Str(&s.models[n - 26]))),
        n if n - 26 - s.models.len() < s.usage.len() => {
            Some((f.usage, PiValue::Str(&s.usage[n - 26 - s.models.len()])))
        }
        n if n - 26 - s.models.len() - s.usage.len() < s.usage_sums.len() => Some((
            f.usage_sums,
            PiValue::Str(&s.usage_sums[n - 26 - s.models.len() - s.usage.len()]),
        )),
        _ => return None,
    })
}

impl tantivy::schema::Document for PiDoc {
    type Value<'a> = PiValue<'a>;
    type FieldsValuesIter<'a> = PiFields<'a>;

    fn iter_fields_and_values(&self) -> PiFields<'_> {
        let left = match self {
            PiDoc::Message(m) => usize::from(m.derived.fields),
            PiDoc::Session(s) => (0..)
                .map_while(|at| session_field(s, at))
                .filter(Option::is_some)
                .count(),
        };
        PiFields {
            doc: self,
            at: 0,
            left,
        }
    }
}

/// The document type of the build's tantivy `IndexWriter`, which is sent
/// none (documents go to the build's own segment writers) and only adds
/// their segments, commits and merges. None can be made: tantivy's writer
/// makes room for ten thousand batches of its document type in its queue,
/// twice, and a queue of messages would be megabytes of pages touched for
/// nothing ([docs/performance.md](../../docs/performance.md#paying-for-usage)).
#[derive(Debug)]
pub enum NoDoc {}

impl tantivy::schema::Document for NoDoc {
    type Value<'a> = PiValue<'a>;
    type FieldsValuesIter<'a> = std::iter::Empty<(Field, PiValue<'a>)>;

    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pi::Role;
    use tantivy::schema::Document as _;

    /// An assistant's message with no entry id, edit or replacement.
    fn hello() -> Document {
        Document {
            line: 3,
            offset: 120,
            entry_id: None,
            role: Role::Assistant,
            timestamp_ms: Some(1_000),
            model: Some("anthropic/opus".into()),
            active: false,
            edited: crate::pi::Edited::No,
            replacement: None,
            text: "hello".into(),
        }
    }

    #[test]
    fn a_message_lends_every_field_it_has_once() {
        let f = Fields::get();
        let doc = PiDoc::Message(MessageDoc::new(7, hello()));
        let got: Vec<Field> = doc.iter_fields_and_values().map(|(f, _)| f).collect();
        assert_eq!(
            got,
            [
                f.text,
                f.sess,
                f.role,
                f.timestamp,
                f.active,
                f.offset,
                f.model,
                f.line,
                f.role_term
            ]
        );
        assert_eq!(doc.iter_fields_and_values().len(), got.len());
    }

    #[test]
    fn a_message_with_every_field_lends_each_with_the_values_of_its_document() {
        let f = Fields::get();
        let doc = PiDoc::Message(MessageDoc::new(
            7,
            Document {
                entry_id: Some("e1".into()),
                role: Role::User,
                active: true,
                edited: crate::pi::Edited::Replaced,
                replacement: Some("new".into()),
                ..hello()
            },
        ));
        let mut fields = doc.iter_fields_and_values();
        assert_eq!(fields.len(), 13);
        let mut got = Vec::new();
        while let Some((field, value)) = fields.next() {
            got.push((field, format!("{value:?}")));
            // What is left is known at every step.
            assert_eq!(fields.len(), 13 - got.len());
        }
        let u = |v: u64| format!("{:?}", PiValue::U64(v));
        let value_of = |field: Field| got.iter().find(|(g, _)| *g == field).unwrap().1.clone();
        assert_eq!(value_of(f.model), u(model_hash(Some("anthropic/opus"))));
        assert_eq!(
            value_of(f.copy),
            u(crate::index::lineage::copy_key("e1", "hello"))
        );
        assert_eq!(value_of(f.entry_id), format!("{:?}", PiValue::Str("e1")));
        assert_eq!(
            value_of(f.replacement),
            format!("{:?}", PiValue::Str("new"))
        );
        assert_eq!(got.len(), 13);
    }

    #[test]
    fn a_session_lends_each_of_its_models() {
        let f = Fields::get();
        let doc = PiDoc::Session(Box::new(SessionDoc {
            sess: 1,
            id: "s".into(),
            path: "/p".into(),
            cwd: None,
            name: Some("n".into()),
            models: vec!["a".into(), "b".into()],
            title: None,
            messages: 2,
            started_ms: None,
            last_ms: None,
            state: FileState::default(),
            root: None,
            parent: None,
            head: 0,
            agent: crate::pi::Agent::Omp,
            usage: Vec::new(),
            usage_sums: Vec::new(),
        }));
        let models: Vec<_> = doc
            .iter_fields_and_values()
            .filter(|(field, _)| *field == f.models)
            .map(|(_, v)| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(models, ["a", "b"]);
        let agent: Vec<_> = doc
            .iter_fields_and_values()
            .filter(|(field, _)| *field == f.agent)
            .map(|(_, v)| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(agent, ["omp"]);
        assert_eq!(doc.iter_fields_and_values().count(), 26 + 2 - 8);
        assert_eq!(doc.iter_fields_and_values().len(), 26 + 2 - 8);
    }
}
