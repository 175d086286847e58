//! Message documents read back whole, as the read side prints them: their
//! stored fields, their columns (one handle per segment, opened once),
//! and their session's facts (one session record per session, read
//! once). A long-running front end's [`Cache`] keeps the columns and the
//! sessions between searches of one state of the index.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::{DocAddress, Searcher, TantivyDocument};

use super::cache::{stamp, Cache};
use super::reader::Reader;
use crate::index::stored::Columns;
use crate::index::{tantivy_err, IndexError};
use crate::read::{SessionRow, StoredDoc};

/// See the module documentation.
pub struct MessageReader<'a> {
    reader: &'a Reader,
    searcher: &'a Searcher,
    columns: HashMap<u32, Arc<Columns>>,
    sessions: HashMap<u64, Option<Arc<SessionRow>>>,
    /// A long-running front end's cache and the state of the index this
    /// reader reads: columns and sessions are looked up there first, and
    /// kept there for the next search.
    kept: Option<(&'a Cache, u64)>,
}

impl<'a> MessageReader<'a> {
    /// A reader over `searcher`'s segments.
    pub fn new(reader: &'a Reader, searcher: &'a Searcher) -> MessageReader<'a> {
        let cache = reader.cache();
        MessageReader {
            reader,
            searcher,
            columns: HashMap::new(),
            sessions: HashMap::new(),
            kept: cache.long_lived().then(|| (cache, stamp(searcher))),
        }
    }

    /// The message columns of segment `segment`.
    pub(crate) fn columns(&mut self, segment: u32) -> Result<&Columns, IndexError> {
        if !self.columns.contains_key(&segment) {
            let reader = self.searcher.segment_reader(segment);
            let kept = self.kept.map(|(cache, _)| cache);
            let c = match kept.and_then(|k| k.columns(reader.segment_id())) {
                Some(c) => c,
                None => {
                    let c = Arc::new(
                        Columns::open(reader).map_err(|e| tantivy_err(&self.reader.pi.dir, e))?,
                    );
                    if let Some(k) = kept {
                        k.keep_columns(self.searcher, reader.segment_id(), c.clone());
                    }
                    c
                }
            };
            self.columns.insert(segment, c);
        }
        Ok(&self.columns[&segment])
    }

    /// The session with key `sess`, read once.
    pub fn session(&mut self, sess: u64) -> Result<Option<Arc<SessionRow>>, IndexError> {
        if let Some(s) = self.sessions.get(&sess) {
            return Ok(s.clone());
        }
        let kept = self.kept;
        if let Some(s) = kept.and_then(|(cache, stamp)| cache.session(stamp, sess)) {
            self.sessions.insert(sess, s.clone());
            return Ok(s);
        }
        let s = self
            .reader
            .pi
            .stored_session(self.searcher, sess)?
            .map(|s| Arc::new(SessionRow::from(s)));
        if let Some((cache, stamp)) = kept {
            cache.keep_session(stamp, sess, s.clone());
        }
        self.sessions.insert(sess, s.clone());
        Ok(s)
    }

    /// The session of the message at `addr`.
    pub fn session_of(&mut self, addr: DocAddress) -> Result<Option<Arc<SessionRow>>, IndexError> {
        let sess = self.columns(addr.segment_ord)?.sess.first(addr.doc_id);
        match sess {
            Some(k) => self.session(k),
            None => Ok(None),
        }
    }

    /// Read the message at `addr` (whose stored document is `d`).
    pub fn read(&mut self, addr: DocAddress, d: &TantivyDocument) -> Result<StoredDoc, IndexError> {
        let fields = self.reader.pi.fields;
        let sess = self
            .columns(addr.segment_ord)?
            .sess
            .first(addr.doc_id)
            .unwrap_or(0);
        let session = self.session(sess)?;
        let models = session.as_ref().map_or(&[][..], |s| &s.models[..]);
        let doc = self.columns[&addr.segment_ord].document(&fields, addr.doc_id, d, models);
        Ok(StoredDoc::new(session.as_deref(), doc))
    }

    /// Read the message at `addr` from the store.
    pub fn read_at(&mut self, addr: DocAddress) -> Result<StoredDoc, IndexError> {
        let d: TantivyDocument = self
            .searcher
            .doc(addr)
            .map_err(|e| tantivy_err(&self.reader.pi.dir, e))?;
        self.read(addr, &d)
    }
}
