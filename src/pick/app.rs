//! The picker's state machine: keys in, jobs for the index out, results
//! in, a frame drawn from the state ([`super::view`]). Nothing here
//! touches a terminal or the index, so tests and the bench drive it
//! with ratatui's `TestBackend` and run its jobs where they like.
//!
//! A query edit asks for a search ([`App::take_search`]); a new selection
//! asks for a preview ([`App::take_preview`]); Tab on a session asks for
//! the hits inside it ([`App::take_hits`]). Each job carries a
//! generation number, and a result is shown only if it answers the newest
//! request: a slow search never overwrites the answer to a later one, and
//! until the answer comes the frame shows the previous results.

use std::sync::Arc;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::input::Input;
use super::preview::{Preview, PreviewKey, Target};
use super::rows::{Query, Row, Rows, FIRST_ROWS, MORE_ROWS};
use super::text::matched_words;
use crate::read::{Hit, Matched, SessionRow};
use crate::search::query::Warning;

/// A search for the worker.
#[derive(Clone, Debug)]
pub struct SearchJob {
    /// Its number: higher is newer.
    pub generation: u64,
    /// What to search.
    pub query: Query,
    /// Rows to list at most.
    pub limit: usize,
}

/// A search's answer.
#[derive(Debug)]
pub struct SearchDone {
    /// The job's number.
    pub generation: u64,
    /// The rows, or what was wrong with the query (or the index).
    pub result: Result<Rows, String>,
}

/// The hits inside one session, for the worker (Tab).
#[derive(Clone, Debug)]
pub struct HitsJob {
    /// Its number: higher is newer.
    pub generation: u64,
    /// The query the rows were found by.
    pub query: Query,
    /// The session.
    pub session: Arc<SessionRow>,
}

/// The hits inside one session.
#[derive(Debug)]
pub struct HitsDone {
    /// The job's number.
    pub generation: u64,
    /// The hits, best first, or why they could not be found.
    pub result: Result<Vec<Hit>, String>,
}

/// A preview for the worker.
#[derive(Clone, Debug)]
pub struct PreviewJob {
    /// Its number: higher is newer.
    pub generation: u64,
    /// What to read.
    pub key: PreviewKey,
    /// The session it is in.
    pub session: Arc<SessionRow>,
}

/// A preview's answer.
#[derive(Debug)]
pub struct PreviewDone {
    /// The job's number.
    pub generation: u64,
    /// What was read.
    pub key: PreviewKey,
    /// The messages, or why they could not be read.
    pub result: Result<Preview, String>,
}

/// Where the cursor of the list is: on sessions, or on the hits inside
/// the selected session (Tab switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// One row per session.
    Sessions,
    /// The hits of the selected session.
    Hits,
}

/// What the user chose.
#[derive(Clone, Debug)]
pub struct Choice {
    /// The session to resume.
    pub session: Arc<SessionRow>,
    /// The hit it was chosen by (none for a session of the listing
    /// without a query, or one found by its name or title alone).
    pub hit: Option<Hit>,
}

/// How the picker ended.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Enter on a session or a hit.
    Chosen(Box<Choice>),
    /// Esc: nothing chosen (exit 1, as fzf).
    Cancelled,
    /// Ctrl-C (exit 130, as fzf).
    Interrupted,
}

/// What the index is doing, for the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Nothing to say.
    Ready,
    /// A refresh runs in the background (the index is shown as it was);
    /// `bytes` of session files read so far.
    Refreshing {
        /// Bytes of session files read so far.
        bytes: u64,
    },
    /// A background refresh committed this many new messages.
    Refreshed {
        /// Messages it indexed.
        messages: u64,
    },
    /// Something the user should know (another build is writing, the
    /// refresh failed).
    Note(String),
}

/// The hits inside the selected session (Tab), asked for or found.
#[derive(Debug)]
pub(super) struct SessionHits {
    /// The hits, once found.
    pub(super) result: Option<Result<Vec<Hit>, String>>,
}

/// The picker.
pub struct App {
    pub(super) input: Input,
    pub(super) active_only: bool,
    pub(super) focus: Focus,
    pub(super) help: bool,
    pub(super) colour: bool,
    pub(super) home: Option<String>,

    pub(super) rows: Vec<Row>,
    pub(super) rows_query: Option<Query>,
    pub(super) total: usize,
    pub(super) warnings: Vec<Warning>,
    pub(super) error: Option<String>,
    asked: u64,
    shown: u64,
    pending_search: Option<SearchJob>,
    limit: usize,

    pub(super) selected: usize,
    pub(super) hit: usize,
    pub(super) list_top: usize,
    pub(super) page: usize,

    pub(super) hits: Option<SessionHits>,
    hits_asked: u64,
    pending_hits: Option<HitsJob>,

    pub(super) preview: Option<(PreviewKey, Result<Preview, String>)>,
    pub(super) preview_scroll: Option<usize>,
    pub(super) preview_page: usize,
    pub(super) preview_target: usize,
    pub(super) preview_lines: Option<super::wrapped::PreviewLines>,
    preview_asked: u64,
    pending_preview: Option<PreviewJob>,

    pub(super) index: IndexState,
    outcome: Option<Outcome>,
}

impl App {
    /// A picker starting with `query`; `colour` off draws with bold,
    /// underline and reverse only (`NO_COLOR`). It asks for its first
    /// search at once.
    pub fn new(query: &str, active_only: bool, colour: bool) -> App {
        let mut app = App {
            input: Input::new(query),
            active_only,
            focus: Focus::Sessions,
            help: false,
            colour,
            home: std::env::var("HOME").ok(),
            rows: Vec::new(),
            rows_query: None,
            total: 0,
            warnings: Vec::new(),
            error: None,
            asked: 0,
            shown: 0,
            pending_search: None,
            limit: FIRST_ROWS,
            selected: 0,
            hit: 0,
            list_top: 0,
            page: 10,
            hits: None,
            hits_asked: 0,
            pending_hits: None,
            preview: None,
            preview_scroll: None,
            preview_page: 10,
            preview_target: 0,
            preview_lines: None,
            preview_asked: 0,
            pending_preview: None,
            index: IndexState::Ready,
            outcome: None,
        };
        app.search();
        app
    }

    /// The home directory shown as `~` (`$HOME` by default).
    pub fn set_home(&mut self, home: Option<String>) {
        self.home = home;
    }

    /// The query as it stands.
    pub fn query(&self) -> Query {
        Query {
            text: self.input.text().to_owned(),
            active_only: self.active_only,
        }
    }

    /// The rows shown.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// The hits of the selected session listed in the Hits focus (empty
    /// until they are found).
    pub fn session_hits(&self) -> &[Hit] {
        match &self.hits {
            Some(SessionHits {
                result: Some(Ok(hits)),
                ..
            }) => hits,
            _ => &[],
        }
    }

    /// Which row is selected, and which hit in it (Hits focus).
    pub fn selection(&self) -> (usize, Option<usize>) {
        (
            self.selected,
            (self.focus == Focus::Hits).then_some(self.hit),
        )
    }

    /// The focus of the list.
    pub fn focus(&self) -> Focus {
        self.focus
    }

    /// Whether the help is shown.
    pub fn help_shown(&self) -> bool {
        self.help
    }

    /// Whether only active branches are searched (Ctrl-A).
    pub fn active_only(&self) -> bool {
        self.active_only
    }

    /// Whether a search was asked for and not answered yet.
    pub fn searching(&self) -> bool {
        self.asked > self.shown
    }

    /// How the picker ended, once it has.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// Take the outcome out, once the picker has ended.
    pub fn take_outcome(&mut self) -> Option<Outcome> {
        self.outcome.take()
    }

    /// The newest search asked for and not yet handed out.
    pub fn take_search(&mut self) -> Option<SearchJob> {
        self.pending_search.take()
    }

    /// The newest hits-in-a-session job asked for and not yet handed out.
    pub fn take_hits(&mut self) -> Option<HitsJob> {
        self.pending_hits.take()
    }

    /// The newest preview asked for and not yet handed out.
    pub fn take_preview(&mut self) -> Option<PreviewJob> {
        self.pending_preview.take()
    }

    /// What the app was told the index is doing.
    pub fn index_state(&self) -> &IndexState {
        &self.index
    }

    /// Tell the app what the index is doing.
    pub fn set_index_state(&mut self, state: IndexState) {
        self.index = state;
    }

    /// The index changed under the picker (a refresh committed): search
    /// again, keeping the selected session where it can.
    pub fn reindexed(&mut self) {
        self.preview = None;
        self.preview_lines = None;
        self.search_again();
    }

    /// Search anew: a new query starts with [`FIRST_ROWS`] rows.
    fn search(&mut self) {
        self.limit = FIRST_ROWS;
        self.search_again();
    }

    /// Search the current query (again) with the current limit.
    fn search_again(&mut self) {
        self.asked += 1;
        self.pending_search = Some(SearchJob {
            generation: self.asked,
            query: self.query(),
            limit: self.limit,
        });
    }

    /// The selection nears the end of the rows listed and the query found
    /// more: ask for [`MORE_ROWS`] times as many (the selection stays).
    fn more_rows(&mut self) {
        let near_end = self.selected + 2 * self.page.max(1) >= self.rows.len();
        if near_end
            && self.rows.len() < self.total
            && self.rows_query.is_some()
            && !self.searching()
        {
            self.limit = self.rows.len().max(FIRST_ROWS) * MORE_ROWS;
            self.search_again();
        }
    }

    /// A search answered. Results of an older search than the newest one
    /// shown are dropped; while the newest is still running, an older
    /// answer is shown (the frame keeps up with the typing).
    pub fn searched(&mut self, done: SearchDone) {
        if done.generation <= self.shown {
            return;
        }
        self.shown = done.generation;
        match done.result {
            Ok(rows) => {
                let query = self.query_of(done.generation);
                let same_query = self.rows_query.is_some() && self.rows_query == query;
                let keep = same_query
                    .then(|| self.rows.get(self.selected).map(|r| r.session.path.clone()))
                    .flatten();
                self.rows = rows.rows;
                self.total = rows.total;
                self.warnings = rows.warnings;
                self.rows_query = query;
                self.error = None;
                let kept = keep.and_then(|p| self.rows.iter().position(|r| r.session.path == p));
                self.selected = kept.unwrap_or(0);
                if !same_query {
                    self.list_top = 0;
                }
                if self.focus == Focus::Hits && kept.is_some() {
                    // The index changed: the hits inside may have too.
                    self.ask_hits();
                } else {
                    self.focus = Focus::Sessions;
                    self.hits = None;
                    self.hit = 0;
                }
                self.want_preview();
            }
            // The previous rows stay: a query being typed is often
            // invalid for a keystroke or two (`role:` before its value).
            Err(message) => self.error = Some(message),
        }
    }

    /// The query that search `generation` was asked with: the current one
    /// if it is the newest, else unknown (a newer one is on its way).
    fn query_of(&self, generation: u64) -> Option<Query> {
        (generation == self.asked).then(|| self.query())
    }

    /// The hits inside a session answered; kept only if they answer the
    /// newest request.
    pub fn hits_found(&mut self, done: HitsDone) {
        if done.generation != self.hits_asked {
            return;
        }
        let Some(hits) = &mut self.hits else {
            return;
        };
        let len = done.result.as_ref().map_or(0, Vec::len);
        hits.result = Some(done.result);
        self.hit = self.hit.min(len.saturating_sub(1));
        self.want_preview();
    }

    /// A preview answered; kept only if it is the newest asked for.
    pub fn previewed(&mut self, done: PreviewDone) {
        if done.generation != self.preview_asked {
            return;
        }
        self.preview = Some((done.key, done.result));
    }

    /// The hit the cursor is on: the selected hit (Hits focus, once they
    /// are found) or the selected session's best.
    pub fn current_hit(&self) -> Option<&Hit> {
        let row = self.rows.get(self.selected)?;
        match self.focus {
            Focus::Hits if !self.session_hits().is_empty() => self.session_hits().get(self.hit),
            _ => row.hit.as_ref(),
        }
    }

    /// What the preview should show for the current selection: the hit,
    /// else the first message of a session found by its title, else the
    /// end of the session (where it was left).
    pub fn preview_key(&self) -> Option<PreviewKey> {
        let row = self.rows.get(self.selected)?;
        let target = match self.current_hit() {
            Some(h) => Target::Message {
                offset: h.doc.offset,
                role: h.doc.role.rank(),
            },
            None if row.matched == Some(Matched::Title) => Target::Start,
            None => Target::End,
        };
        Some(PreviewKey {
            sess: row.session.key,
            host: row.session.host.clone(),
            path: row.session.path.clone(),
            target,
        })
    }

    /// The words the preview highlights: the current hit's matches (or
    /// the title's, for a session found by it).
    pub fn preview_words(&self) -> Vec<String> {
        match self.current_hit() {
            Some(h) => matched_words(&h.snippet, &h.highlights),
            None => self
                .rows
                .get(self.selected)
                .map(|r| matched_words(&r.snippet, &r.highlights))
                .unwrap_or_default(),
        }
    }

    fn want_preview(&mut self) {
        self.preview_scroll = None;
        let Some(key) = self.preview_key() else {
            return;
        };
        if self.preview.as_ref().is_some_and(|(k, _)| *k == key) {
            return;
        }
        let Some(session) = self.rows.get(self.selected).map(|r| r.session.clone()) else {
            return;
        };
        self.preview_asked += 1;
        self.pending_preview = Some(PreviewJob {
            generation: self.preview_asked,
            key,
            session,
        });
    }

    /// Handle a terminal event: a key, a paste, a resize.
    pub fn event(&mut self, event: &Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(*key),
            Event::Paste(text) if self.outcome.is_none() => {
                self.help = false;
                self.input.insert_str(text);
                self.search();
            }
            // The next frame is drawn at the new size.
            _ => {}
        }
    }

    /// Handle a key press.
    pub fn key(&mut self, key: KeyEvent) {
        if self.outcome.is_some() {
            return;
        }
        // "index updated" was news until the next key.
        if matches!(self.index, IndexState::Refreshed { .. }) {
            self.index = IndexState::Ready;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        if ctrl && key.code == KeyCode::Char('c') {
            self.outcome = Some(Outcome::Interrupted);
            return;
        }
        if self.help {
            // Any key closes the help; Esc and ? only that.
            self.help = false;
            if matches!(key.code, KeyCode::Esc | KeyCode::Char('?') | KeyCode::F(1)) {
                return;
            }
        }
        let edited = match key.code {
            KeyCode::Esc => {
                self.outcome = Some(Outcome::Cancelled);
                false
            }
            KeyCode::Char('g' | 'q') if ctrl => {
                self.outcome = Some(Outcome::Cancelled);
                false
            }
            KeyCode::Enter => {
                self.choose();
                false
            }
            KeyCode::Char('m') if ctrl => {
                self.choose();
                false
            }
            KeyCode::Char('?') | KeyCode::F(1) if !ctrl && !alt => {
                self.help = true;
                false
            }
            KeyCode::Tab => {
                self.toggle_focus();
                false
            }
            KeyCode::BackTab => {
                self.set_focus(Focus::Sessions);
                false
            }
            KeyCode::Char('a') if ctrl => {
                self.active_only = !self.active_only;
                self.search();
                false
            }
            KeyCode::Up if shift => {
                self.scroll_preview(-1);
                false
            }
            KeyCode::Down if shift => {
                self.scroll_preview(1);
                false
            }
            KeyCode::PageUp if shift => {
                self.scroll_preview(-(self.preview_page as isize));
                false
            }
            KeyCode::PageDown if shift => {
                self.scroll_preview(self.preview_page as isize);
                false
            }
            KeyCode::Up => {
                self.move_by(-1);
                false
            }
            KeyCode::Down => {
                self.move_by(1);
                false
            }
            KeyCode::Char('p' | 'k') if ctrl => {
                self.move_by(-1);
                false
            }
            KeyCode::Char('n' | 'j') if ctrl => {
                self.move_by(1);
                false
            }
            KeyCode::PageUp => {
                self.move_by(-(self.page.max(1) as isize));
                false
            }
            KeyCode::PageDown => {
                self.move_by(self.page.max(1) as isize);
                false
            }
            KeyCode::Left if ctrl || alt => {
                self.input.word_left();
                false
            }
            KeyCode::Right if ctrl || alt => {
                self.input.word_right();
                false
            }
            KeyCode::Char('b') if alt => {
                self.input.word_left();
                false
            }
            KeyCode::Char('f') if alt => {
                self.input.word_right();
                false
            }
            KeyCode::Left => {
                self.input.left();
                false
            }
            KeyCode::Char('b') if ctrl => {
                self.input.left();
                false
            }
            KeyCode::Right => {
                self.input.right();
                false
            }
            KeyCode::Char('f') if ctrl => {
                self.input.right();
                false
            }
            KeyCode::Home => {
                self.input.home();
                false
            }
            KeyCode::End => {
                self.input.end();
                false
            }
            KeyCode::Char('e') if ctrl => {
                self.input.end();
                false
            }
            KeyCode::Backspace if alt || ctrl => self.input.delete_word(),
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Char('h') if ctrl => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Char('d') if ctrl => self.input.delete(),
            KeyCode::Char('w') if ctrl => self.input.delete_word(),
            KeyCode::Char('u') if ctrl => self.input.delete_to_start(),
            KeyCode::Char(c) if !ctrl && !alt => {
                self.input.insert(c);
                true
            }
            _ => false,
        };
        if edited {
            crate::failpoint::pick_panic("main", self.input.text());
            self.search();
        }
    }

    fn choose(&mut self) {
        let Some(row) = self.rows.get(self.selected) else {
            // Nothing to choose: Enter does nothing (Esc leaves).
            return;
        };
        self.outcome = Some(Outcome::Chosen(Box::new(Choice {
            session: row.session.clone(),
            hit: self.current_hit().cloned(),
        })));
    }

    fn toggle_focus(&mut self) {
        let next = match self.focus {
            Focus::Sessions => Focus::Hits,
            Focus::Hits => Focus::Sessions,
        };
        self.set_focus(next);
    }

    fn set_focus(&mut self, focus: Focus) {
        if focus == self.focus {
            return;
        }
        // A session of the listing, or one found by its name alone, has
        // no hits to go through.
        if focus == Focus::Hits && self.rows.get(self.selected).is_none_or(|r| r.hit.is_none()) {
            return;
        }
        self.focus = focus;
        self.hit = 0;
        self.list_top = match focus {
            Focus::Hits => 0,
            // Back on the session the hits were of.
            Focus::Sessions => self.selected.saturating_sub(self.page / 2),
        };
        match focus {
            Focus::Hits => self.ask_hits(),
            Focus::Sessions => self.hits = None,
        }
        self.want_preview();
    }

    /// Ask for the hits inside the selected session.
    fn ask_hits(&mut self) {
        let (Some(row), Some(query)) = (self.rows.get(self.selected), self.rows_query.clone())
        else {
            return;
        };
        self.hits_asked += 1;
        self.hits = Some(SessionHits { result: None });
        self.pending_hits = Some(HitsJob {
            generation: self.hits_asked,
            query,
            session: row.session.clone(),
        });
    }

    fn move_by(&mut self, delta: isize) {
        let len = match self.focus {
            Focus::Sessions => self.rows.len(),
            Focus::Hits => self.session_hits().len(),
        };
        let at = match self.focus {
            Focus::Sessions => &mut self.selected,
            Focus::Hits => &mut self.hit,
        };
        if len == 0 {
            return;
        }
        let next = (*at as isize + delta).clamp(0, len as isize - 1) as usize;
        if next != *at {
            *at = next;
            self.want_preview();
        }
        if self.focus == Focus::Sessions {
            self.more_rows();
        }
    }

    fn scroll_preview(&mut self, delta: isize) {
        // `None` is "at the target message": the line it starts on was
        // found when the preview was last drawn.
        let from = self.preview_scroll.unwrap_or(self.preview_target);
        self.preview_scroll = Some((from as isize + delta).max(0) as usize);
    }
}
