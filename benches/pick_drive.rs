//! Driving the picker the way a user does, without a terminal: a key
//! event into the app, its search and preview run in place, the frame
//! drawn into ratatui's `TestBackend`. The time of one keystroke is from
//! the key to the frame that shows its results (rows and preview), which
//! on a terminal is the search worker's time plus one draw. Shared by
//! `benches/pick.rs` (criterion) and `examples/pick_latency.rs` (median
//! and p99 of every keystroke).

use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use pi_index::pick::app::App;
use pi_index::pick::{settle, View};

/// The queries typed: one, two and three words, and one with filters.
pub const SCENARIOS: [(&str, &str); 4] = [
    ("one_word", "error"),
    ("two_words", "error handling"),
    ("three_words", "connection pool timeout"),
    ("filtered", "error role:user after:2026-02-01"),
];

/// The terminal drawn into: wide and tall enough for the preview.
pub const SIZE: (u16, u16) = (120, 40);

/// A picker, its index and its terminal.
pub struct Driver {
    pub app: App,
    pub view: View,
    pub terminal: Terminal<TestBackend>,
}

impl Driver {
    /// A picker opened on `query`, its first frame drawn.
    pub fn new(view: View, query: &str) -> Driver {
        let mut app = App::new(query, false, true);
        settle(&mut app, Some(&view));
        let mut terminal = Terminal::new(TestBackend::new(SIZE.0, SIZE.1)).unwrap();
        terminal.draw(|f| app.draw(f)).unwrap();
        Driver {
            app,
            view,
            terminal,
        }
    }

    /// One key, to the frame that shows what it asked for.
    pub fn press(&mut self, code: KeyCode) -> Duration {
        let start = Instant::now();
        self.app.event(&Event::Key(KeyEvent::from(code)));
        settle(&mut self.app, Some(&self.view));
        self.terminal.draw(|f| self.app.draw(f)).unwrap();
        start.elapsed()
    }

    /// Type `text` key by key from an empty query; the time of each key.
    #[allow(dead_code)] // the criterion bench times single keys
    pub fn type_query(&mut self, text: &str) -> Vec<Duration> {
        let mut times = Vec::new();
        while !self.app.query().text.is_empty() {
            self.press(KeyCode::Backspace);
        }
        for c in text.chars() {
            times.push(self.press(KeyCode::Char(c)));
        }
        times
    }
}
