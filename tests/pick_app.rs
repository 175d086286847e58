//! The picker's state machine (`pi_index::pick::app`) driven key by key,
//! its jobs run in place ([`settle`]), every frame drawn into ratatui's
//! `TestBackend` and read back cell by cell: what a user would see, without
//! a terminal. The index is `fixtures/search` (three sessions: alpha, with
//! an abandoned branch that mentions tokio; alpha/sub; beta, named "Beta
//! planning", whose first message asks about tokio).

use std::path::{Path, PathBuf};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use pi_index::pick::app::{App, Focus, IndexState, Outcome};
use pi_index::pick::{run_search, settle, View};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;
use unicode_width::UnicodeWidthStr;

use crate::util::Scratch;

fn search_fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/search")
}

/// An index of `dirs`, opened.
fn view_of(s: &Scratch, dirs: &[&Path]) -> View {
    s.build(dirs, &[]);
    View::open(&s.index()).unwrap()
}

pub(crate) fn fixtures_view(s: &Scratch) -> View {
    view_of(s, &[&search_fixtures()])
}

/// A picker over `view` with `query`, its first search answered.
pub(crate) fn picker(view: &View, query: &str, colour: bool) -> App {
    let mut app = App::new(query, false, colour);
    app.set_home(None);
    settle(&mut app, Some(view));
    app
}

/// One frame of `app` at `w`x`h`.
fn frame(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| app.draw(f)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's rows as text (a wide character once, not once per cell).
fn lines(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (0..area.height)
        .map(|y| {
            let mut line = String::new();
            let mut skip = 0;
            for x in 0..area.width {
                let symbol = buf[(x, y)].symbol();
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                skip = symbol.width().saturating_sub(1);
                line.push_str(symbol);
            }
            line.trim_end().to_owned()
        })
        .collect()
}

pub(crate) fn screen(app: &mut App, w: u16, h: u16) -> String {
    lines(&frame(app, w, h)).join("\n")
}

fn press(app: &mut App, view: &View, code: KeyCode, mods: KeyModifiers) {
    app.event(&Event::Key(KeyEvent::new(code, mods)));
    settle(app, Some(view));
}

fn key(app: &mut App, view: &View, code: KeyCode) {
    press(app, view, code, KeyModifiers::NONE);
}

fn ctrl(app: &mut App, view: &View, c: char) {
    press(app, view, KeyCode::Char(c), KeyModifiers::CONTROL);
}

fn typed(app: &mut App, view: &View, text: &str) {
    for c in text.chars() {
        key(app, view, KeyCode::Char(c));
    }
}

/// The row of the screen holding `needle`.
fn row_with(screen: &str, needle: &str) -> usize {
    screen
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no row holds {needle:?} in\n{screen}"))
}

fn chosen(app: &App) -> &pi_index::pick::app::Choice {
    match app.outcome() {
        Some(Outcome::Chosen(c)) => c,
        other => panic!("nothing chosen: {other:?}"),
    }
}

#[test]
fn without_a_query_every_session_is_listed_newest_first() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "", false);
    let text = screen(&mut app, 120, 30);
    let first = text.lines().next().unwrap();
    assert!(first.starts_with("> "), "{first}");
    assert!(first.ends_with("3 sessions"), "{first}");
    // Newest first: alpha/sub (March), beta (February), alpha (January).
    let sub = row_with(&text, "Explain the flaky test");
    let beta = row_with(&text, "Beta planning");
    let alpha = row_with(&text, "How do I parse JSON");
    assert!(sub < beta && beta < alpha, "{text}");
    assert!(text.lines().nth(sub).unwrap().starts_with("> "), "{text}");
    assert!(text.contains("alpha/sub"), "{text}");
    assert!(text.contains("2026-03-05"), "{text}");
}

#[test]
fn typing_searches_one_row_per_session_with_the_best_snippet_highlighted() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "", false);
    typed(&mut app, &view, "tokio");
    assert_eq!(app.query().text, "tokio");
    let buf = frame(&mut app, 120, 30);
    let text = lines(&buf).join("\n");
    assert!(
        text.lines().next().unwrap().ends_with("2 sessions"),
        "{text}"
    );
    // Beta's first message names tokio: found by its title, listed first,
    // under its name, with its directory, date and message count.
    let beta = row_with(&text, "Beta planning");
    let alpha = row_with(&text, "How do I parse JSON");
    assert!(beta < alpha, "{text}");
    let beta_line = text.lines().nth(beta).unwrap();
    for part in ["/home/u/beta", "[title]", "2026-02-14", "msgs"] {
        assert!(beta_line.contains(part), "{part} in {beta_line}");
    }
    assert!(beta_line.starts_with("> "), "{beta_line}");
    // Alpha is found by messages on its abandoned branch: marked.
    let snippet = text.lines().nth(alpha + 1).unwrap();
    assert!(snippet.contains("[abandoned branch]"), "{snippet}");
    assert!(snippet.contains("tokio runtime panics"), "{snippet}");
    // The matched word is highlighted (bold and underlined without
    // colour), the words around it are not.
    let y = (alpha + 1) as u16;
    let x = snippet.find("tokio").unwrap() as u16;
    let matched = Modifier::BOLD | Modifier::UNDERLINED;
    assert!(buf[(x, y)].modifier.contains(matched), "{:?}", buf[(x, y)]);
    assert!(buf[(x + 4, y)].modifier.contains(matched));
    assert!(!buf[(x + 6, y)].modifier.contains(Modifier::UNDERLINED));
    // No colour was asked for: none is drawn.
    for cell in buf.content() {
        assert_eq!(cell.fg, Color::Reset, "{cell:?}");
        assert_eq!(cell.bg, Color::Reset, "{cell:?}");
    }
}

#[test]
fn with_colour_matches_are_red_and_the_selection_has_a_background() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "watcher", true);
    let buf = frame(&mut app, 120, 30);
    let text = lines(&buf).join("\n");
    // The one row found, selected: its two lines on a background to the
    // list's edge, the matched word red in its snippet.
    let row = row_with(&text, "> Explain the flaky");
    let snippet = text.lines().nth(row + 1).unwrap();
    let x = snippet.find("watcher").unwrap() as u16;
    assert_eq!(buf[(x, (row + 1) as u16)].fg, Color::Red, "{text}");
    assert_eq!(buf[(x, (row + 1) as u16)].bg, Color::Indexed(236));
    assert_eq!(buf[(70, row as u16)].bg, Color::Indexed(236));
    assert_eq!(buf[(70, (row + 2) as u16)].bg, Color::Reset);
}

#[test]
fn the_query_language_and_its_filters_apply() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio role:assistant", false);
    let text = screen(&mut app, 120, 30);
    // A filter on messages' own facts: found by an assistant message
    // only, so beta's title does not count.
    assert!(
        text.lines().next().unwrap().ends_with("2 sessions"),
        "{text}"
    );
    assert!(!text.contains("[title]"), "{text}");
    assert!(text.contains("[assistant]"), "{text}");
    assert!(!text.contains("[user]"), "{text}");
    // A filter of sessions: only those below the directory.
    let mut app = picker(&view, "cwd:/home/u/alpha", false);
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().next().unwrap().ends_with("2 sessions"),
        "{text}"
    );
    assert!(!text.contains("Beta planning"), "{text}");
}

#[test]
fn a_query_being_typed_keeps_the_rows_and_says_what_is_wrong() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    app.event(&Event::Paste(" role:".into()));
    settle(&mut app, Some(&view));
    assert_eq!(app.query().text, "tokio role:");
    let text = screen(&mut app, 120, 30);
    let status = text.lines().nth(1).unwrap();
    assert!(status.contains("role: needs a value"), "{status}");
    assert!(text.contains("Beta planning"), "{text}");
    typed(&mut app, &view, "robot");
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().nth(1).unwrap().contains("unknown role"),
        "{text}"
    );
    assert!(text.contains("Beta planning"), "{text}");
    // Fixed: the rows of the new query, the hint back.
    for _ in 0.."robot".len() {
        key(&mut app, &view, KeyCode::Backspace);
    }
    typed(&mut app, &view, "user");
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().nth(1).unwrap().contains("Enter resume"),
        "{text}"
    );
    assert!(text.contains("[user]"), "{text}");
    // Ctrl-U clears the query: every session again.
    ctrl(&mut app, &view, 'u');
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().next().unwrap().ends_with("3 sessions"),
        "{text}"
    );
}

#[test]
fn an_older_answer_never_replaces_a_newer_one() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = App::new("", false, false);
    app.set_home(None);
    let first = app.take_search().unwrap();
    app.event(&Event::Key(KeyEvent::from(KeyCode::Char('x'))));
    let second = app.take_search().unwrap();
    assert!(second.generation > first.generation);
    app.event(&Event::Key(KeyEvent::from(KeyCode::Char('y'))));
    let third = app.take_search().unwrap();
    assert_eq!(third.query.text, "xy");
    // The second answer comes first: it is shown while the third runs.
    app.searched(run_search(Some(&view), &second));
    assert!(app.searching());
    assert!(app.rows().is_empty(), "nothing matches x");
    app.searched(run_search(Some(&view), &third));
    assert!(!app.searching());
    // The first (every session) comes last, and is dropped.
    app.searched(run_search(Some(&view), &first));
    assert!(app.rows().is_empty());
    let text = screen(&mut app, 100, 20);
    assert!(text.contains("no session matches"), "{text}");
}

#[test]
fn arrows_ctrl_n_ctrl_p_and_pages_move_the_selection_and_enter_chooses() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "", false);
    assert_eq!(app.selection(), (0, None));
    key(&mut app, &view, KeyCode::Down);
    assert_eq!(app.selection(), (1, None));
    ctrl(&mut app, &view, 'n');
    assert_eq!(app.selection(), (2, None));
    key(&mut app, &view, KeyCode::Down);
    assert_eq!(app.selection(), (2, None), "the last row stays selected");
    ctrl(&mut app, &view, 'p');
    assert_eq!(app.selection(), (1, None));
    let text = screen(&mut app, 120, 30);
    let beta = row_with(&text, "Beta planning");
    assert!(text.lines().nth(beta).unwrap().starts_with("> "), "{text}");
    key(&mut app, &view, KeyCode::PageUp);
    assert_eq!(app.selection(), (0, None));
    key(&mut app, &view, KeyCode::PageDown);
    assert_eq!(app.selection(), (2, None));
    key(&mut app, &view, KeyCode::Up);
    key(&mut app, &view, KeyCode::Enter);
    let choice = chosen(&app);
    assert!(choice
        .session
        .path
        .ends_with("cccc0003-0000-4000-8000-000000000003.jsonl"));
    assert_eq!(choice.session.cwd.as_deref(), Some("/home/u/beta"));
    assert!(choice.hit.is_none(), "the listing has no hit");
    // Once chosen, keys do nothing.
    key(&mut app, &view, KeyCode::Down);
    assert_eq!(app.selection(), (1, None));
}

#[test]
fn tab_goes_through_the_hits_inside_one_session_and_enter_chooses_one() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    key(&mut app, &view, KeyCode::Down);
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Hits);
    assert_eq!(app.session_hits().len(), 2, "a3 and a4 name tokio");
    // 80x24: the list alone.
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("How do I parse JSON"), "{text}");
    assert!(text.contains("2 hits · Tab: back to sessions"), "{text}");
    assert_eq!(text.matches("[abandoned branch]").count(), 2, "{text}");
    assert!(text.contains("Enter resume here"), "{text}");
    let best = app.session_hits()[0].doc.line;
    key(&mut app, &view, KeyCode::Down);
    assert_eq!(app.selection(), (1, Some(1)));
    let other = app.session_hits()[1].doc.line;
    assert_ne!(best, other);
    // The preview follows the hit.
    let text = screen(&mut app, 120, 30);
    assert!(text.contains(&format!("line {other} ·")), "{text}");
    key(&mut app, &view, KeyCode::Enter);
    let choice = chosen(&app);
    assert_eq!(choice.hit.as_ref().unwrap().doc.line, other);
    assert!(!choice.hit.as_ref().unwrap().doc.active);
    assert!(choice
        .session
        .path
        .ends_with("aaaa0001-0000-4000-8000-000000000001.jsonl"));
}

#[test]
fn tab_back_returns_to_the_session_rows() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Hits);
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Sessions);
    let text = screen(&mut app, 120, 30);
    assert!(text.contains("Tab hits"), "{text}");
    assert!(text.contains("How do I parse JSON"), "{text}");
    // The listing has no hits: Tab stays on the sessions.
    let mut app = picker(&view, "", false);
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Sessions);
}

#[test]
fn ctrl_a_keeps_the_active_branch_only() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    ctrl(&mut app, &view, 'a');
    assert!(app.active_only());
    let text = screen(&mut app, 120, 30);
    let first = text.lines().next().unwrap();
    assert!(first.ends_with("[active branch] 1 session"), "{first}");
    assert!(!text.contains("How do I parse JSON"), "{text}");
    assert!(!text.contains("[abandoned branch]"), "{text}");
    ctrl(&mut app, &view, 'a');
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().next().unwrap().ends_with(" 2 sessions"),
        "{text}"
    );
    assert!(text.contains("[abandoned branch]"), "{text}");
}

#[test]
fn esc_cancels_ctrl_c_interrupts_and_question_mark_shows_the_keys() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "", false);
    key(&mut app, &view, KeyCode::Char('?'));
    assert!(app.help_shown());
    let text = screen(&mut app, 100, 30);
    assert!(text.contains("keys"), "{text}");
    assert!(text.contains("Ctrl-A"), "{text}");
    assert!(text.contains("quit (exit 130)"), "{text}");
    assert_eq!(app.query().text, "", "? opened the help, it was not typed");
    // Esc closes the help, and only that.
    key(&mut app, &view, KeyCode::Esc);
    assert!(!app.help_shown());
    assert!(app.outcome().is_none());
    key(&mut app, &view, KeyCode::Esc);
    assert!(matches!(app.outcome(), Some(Outcome::Cancelled)));

    let mut app = picker(&view, "", false);
    ctrl(&mut app, &view, 'c');
    assert!(matches!(app.outcome(), Some(Outcome::Interrupted)));
}

#[test]
fn the_preview_shows_the_messages_around_the_hit_and_scrolls() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    key(&mut app, &view, KeyCode::Down);
    let text = screen(&mut app, 140, 30);
    // The preview: right of the list, the hit marked, its neighbours
    // around it, the abandoned branch said.
    let marker = row_with(&text, "▶ ");
    let preview_x = text.lines().nth(marker).unwrap().find("▶").unwrap();
    assert!(preview_x > 60, "{text}");
    assert!(text.contains("abandoned branch"), "{text}");
    assert!(
        text.contains("Use serde_json::from_str"),
        "a message before it"
    );
    // Shift-Down scrolls it by a line.
    press(&mut app, &view, KeyCode::Down, KeyModifiers::SHIFT);
    let scrolled = screen(&mut app, 140, 30);
    assert_eq!(row_with(&scrolled, "▶ "), marker - 1, "{scrolled}");
    press(&mut app, &view, KeyCode::PageDown, KeyModifiers::SHIFT);
    let paged = screen(&mut app, 140, 30);
    assert!(!paged.contains("▶ "), "a page down: {paged}");
    press(&mut app, &view, KeyCode::PageUp, KeyModifiers::SHIFT);
    press(&mut app, &view, KeyCode::PageUp, KeyModifiers::SHIFT);
    let top = screen(&mut app, 140, 30);
    assert!(top.contains("▶ "), "{top}");
}

#[test]
fn narrow_terminals_fold_the_preview_away_and_resizing_redraws() {
    let s = Scratch::new();
    let view = fixtures_view(&s);
    let mut app = picker(&view, "tokio", false);
    let mut terminal = Terminal::new(TestBackend::new(120, 30)).unwrap();
    terminal.draw(|f| app.draw(f)).unwrap();
    let wide = lines(terminal.backend().buffer()).join("\n");
    assert!(wide.contains('│') && wide.contains("▶ "), "{wide}");
    for (w, h) in [(80, 24), (60, 15), (120, 24), (80, 40)] {
        terminal.backend_mut().resize(w, h);
        terminal.draw(|f| app.draw(f)).unwrap();
        let buf = terminal.backend().buffer();
        assert_eq!((buf.area.width, buf.area.height), (w, h));
        let text = lines(buf).join("\n");
        assert!(!text.contains('│'), "{w}x{h}: no preview\n{text}");
        assert!(text.contains("Beta planning"), "{w}x{h}\n{text}");
        for line in lines(buf) {
            assert!(line.width() <= w as usize, "{w}x{h}: {line}");
        }
    }
    // 60x15: the prompt, the status, six rows of two lines.
    let text = screen(&mut app, 60, 15);
    assert!(
        text.lines().next().unwrap().starts_with("> tokio"),
        "{text}"
    );
    assert!(text.contains("How do I parse"), "{text}");
    // The keys fit at 60x15, over the whole screen.
    key(&mut app, &view, KeyCode::Char('?'));
    let text = screen(&mut app, 60, 15);
    for k in ["Ctrl-A", "Ctrl-C", "these keys"] {
        assert!(text.contains(k), "{k}:\n{text}");
    }
    key(&mut app, &view, KeyCode::Char('?'));
    // Too small to draw: said, never a panic.
    let text = screen(&mut app, 10, 3);
    assert!(text.contains("too"), "{text}");
}

#[test]
fn text_from_sessions_is_sanitized_before_it_is_drawn() {
    let s = Scratch::new();
    let dir = s.dir.path().join("hostile");
    std::fs::create_dir_all(&dir).unwrap();
    let lines_ = [
        r#"{"type":"session","version":3,"id":"eeee0005-0000-4000-8000-000000000005","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/home/u/\u001b[2Jevil"}"#,
        r#"{"type":"session_info","id":"e0","parentId":null,"timestamp":"2026-03-01T10:00:00.100Z","name":"title\u001b]0;pwned\u0007 here"}"#,
        r#"{"type":"message","id":"e1","parentId":"e0","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"user","content":"zqhostile \u001b]52;c;Y2xpcA==\u0007 clipboard\u009b31m red","timestamp":0}}"#,
    ];
    std::fs::write(dir.join("hostile.jsonl"), lines_.join("\n") + "\n").unwrap();
    let view = view_of(&s, &[&dir]);
    let mut app = picker(&view, "zqhostile", true);
    let buf = frame(&mut app, 140, 30);
    let text = lines(&buf).join("\n");
    assert!(text.contains("title here"), "{text}");
    assert!(text.contains("zqhostile clipboard"), "{text}");
    for cell in buf.content() {
        assert!(
            !cell.symbol().chars().any(|c| c.is_control()),
            "a control character reached a cell: {:?}",
            cell.symbol()
        );
    }
    assert!(!text.contains("pwned") && !text.contains("Y2xp"), "{text}");
}

#[test]
fn with_no_index_the_picker_draws_and_says_so() {
    let mut app = App::new("tokio", false, false);
    settle(&mut app, None);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("no session matches"), "{text}");
    let mut app = App::new("", false, false);
    settle(&mut app, None);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("the index holds no session yet"), "{text}");
    key_no_view(&mut app, KeyCode::Enter);
    assert!(app.outcome().is_none(), "nothing to choose");
}

fn key_no_view(app: &mut App, code: KeyCode) {
    app.event(&Event::Key(KeyEvent::from(code)));
    settle(app, None);
}

#[test]
fn more_rows_are_asked_for_as_the_selection_nears_the_end() {
    let s = Scratch::new();
    let dir = s.dir.path().join("many");
    std::fs::create_dir_all(&dir).unwrap();
    let n = pi_index::pick::rows::FIRST_ROWS + 30;
    for i in 0..n {
        let text = [
            format!(r#"{{"type":"session","version":3,"id":"dddd{i:04}","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/home/u/many"}}"#),
            format!(r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T10:{:02}:{:02}.000Z","message":{{"role":"user","content":"zqmany number {i}","timestamp":0}}}}"#, i / 60, i % 60),
        ]
        .join("\n");
        std::fs::write(dir.join(format!("s{i:04}.jsonl")), text + "\n").unwrap();
    }
    let view = view_of(&s, &[&dir]);
    let mut app = picker(&view, "zqmany", false);
    let first = pi_index::pick::rows::FIRST_ROWS;
    assert_eq!(app.rows().len(), first);
    let text = screen(&mut app, 100, 30);
    let prompt = text.lines().next().unwrap();
    assert!(
        prompt.ends_with(&format!("{first} of {n} sessions")),
        "{prompt}"
    );
    // Down to the last rows listed: the rest are asked for, and the
    // selection stays on its session.
    while app.selection().0 + 1 < first {
        key(&mut app, &view, KeyCode::PageDown);
        if app.rows().len() > first {
            break;
        }
    }
    assert_eq!(app.rows().len(), n);
    let at = app.selection().0;
    let path = app.rows()[at].session.path.clone();
    key(&mut app, &view, KeyCode::Down);
    key(&mut app, &view, KeyCode::Up);
    assert_eq!(app.rows()[app.selection().0].session.path, path);
    let text = screen(&mut app, 100, 30);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(&format!("{n} sessions")),
        "{text}"
    );
}

#[test]
fn a_background_refresh_shows_its_progress_then_the_new_rows() {
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    for entry in walk(&search_fixtures()) {
        let to = dir.join(entry.strip_prefix(search_fixtures()).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &to).unwrap();
    }
    let view = view_of(&s, &[&dir]);
    let mut app = picker(&view, "", false);
    app.set_index_state(IndexState::Refreshing { bytes: 12_500_000 });
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("bringing the index up to date: 12 MB read… (showing it as it was)"),
        "{text}"
    );
    assert!(
        text.lines().next().unwrap().ends_with("3 sessions"),
        "{text}"
    );
    // The refresh committed a new session: searched again, said once.
    std::fs::write(
        dir.join("new.jsonl"),
        [
            r#"{"type":"session","version":3,"id":"ffff0006","timestamp":"2026-04-01T10:00:00.000Z","cwd":"/home/u/new"}"#,
            r#"{"type":"message","id":"f1","parentId":null,"timestamp":"2026-04-01T10:00:01.000Z","message":{"role":"user","content":"zqnew after the refresh","timestamp":0}}"#,
        ]
        .join("\n")
            + "\n",
    )
    .unwrap();
    let view = view_of(&s, &[&dir]);
    app.set_index_state(IndexState::Refreshed { messages: 1 });
    app.reindexed();
    settle(&mut app, Some(&view));
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().next().unwrap().ends_with("4 sessions"),
        "{text}"
    );
    assert!(text.contains("zqnew after the refresh"), "{text}");
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("index updated: 1 new message"),
        "{text}"
    );
    key(&mut app, &view, KeyCode::Down);
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().nth(1).unwrap().starts_with("Enter resume"),
        "{text}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_hit_copied_into_forks_says_how_many_forks_hold_it() {
    let s = Scratch::new();
    let forks = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/forks");
    let view = view_of(&s, &[&forks]);
    // The parent and its two forks each hold the message: three rows
    // (three sessions), each saying where else it is.
    let mut app = picker(&view, "zqforkshared", false);
    let text = screen(&mut app, 120, 30);
    assert!(
        text.lines().next().unwrap().ends_with("3 sessions"),
        "{text}"
    );
    assert_eq!(
        text.matches("[user] [also in 2 forks] How do I retry")
            .count(),
        3,
        "{text}"
    );
    // A message only one session holds says nothing of the kind.
    let mut app = picker(&view, "zqforkinferredown", false);
    let text = screen(&mut app, 120, 30);
    assert!(!text.contains("[also in"), "{text}");
    // Inside one session (Tab), each hit says it too.
    let mut app = picker(&view, "zqforkanswer", false);
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Hits);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("[also in 2 forks]"), "{text}");
}

#[test]
fn the_team_database_is_picked_from_as_the_index_is_each_session_with_its_host() {
    let Some(url) = crate::team::database("pick_db") else {
        return;
    };
    let s = Scratch::new();
    s.build(&[&search_fixtures()], &[]);
    crate::util::pg::push_ok(&s, &url, "bob@devbox");
    let db = pi_index::read::open(Some(&url), &s.index()).unwrap();
    assert!(!db.capabilities().files, "the files stay on their host");
    let view = View::new(std::sync::Arc::from(db));
    // Every session, newest first, each under its host.
    let mut app = picker(&view, "", false);
    let text = screen(&mut app, 140, 30);
    assert!(
        text.lines().next().unwrap().ends_with("3 sessions"),
        "{text}"
    );
    let sub = row_with(&text, "Explain the flaky test");
    let beta = row_with(&text, "Beta planning");
    let alpha = row_with(&text, "How do I parse JSON");
    assert!(sub < beta && beta < alpha, "{text}");
    assert!(
        text.lines().nth(beta).unwrap().contains("bob@devbox"),
        "{text}"
    );
    // A query finds what the local picker finds.
    typed(&mut app, &view, "tokio");
    let text = screen(&mut app, 140, 30);
    assert!(
        text.lines().next().unwrap().ends_with("2 sessions"),
        "{text}"
    );
    assert!(text.contains("Beta planning"), "{text}");
    assert!(text.contains("How do I parse JSON"), "{text}");
    // The preview: the hit among its neighbours, read from the database.
    let at = app.selection().0;
    let alpha_first = row_with(&text, "How do I parse JSON") < row_with(&text, "Beta planning");
    if (at == 0) == alpha_first {
        // Alpha selected.
    } else {
        key(&mut app, &view, KeyCode::Down);
    }
    let text = screen(&mut app, 140, 30);
    assert!(text.contains("▶ "), "{text}");
    assert!(
        text.contains("Use serde_json::from_str"),
        "a message before the hit: {text}"
    );
    // Tab: the hits inside that session, each of them.
    key(&mut app, &view, KeyCode::Tab);
    assert_eq!(app.focus(), Focus::Hits);
    assert_eq!(app.session_hits().len(), 2, "a3 and a4 name tokio");
    assert!(app
        .session_hits()
        .iter()
        .all(|h| h.doc.host.as_deref() == Some("bob@devbox")));
    key(&mut app, &view, KeyCode::Enter);
    let choice = chosen(&app);
    assert_eq!(choice.session.host.as_deref(), Some("bob@devbox"));
    assert!(choice
        .session
        .path
        .ends_with("aaaa0001-0000-4000-8000-000000000001.jsonl"));
}
