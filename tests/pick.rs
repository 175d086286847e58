//! `pi-index pick` through a real terminal: the binary runs in a tmux
//! pane (`util::tmux`), keys are sent with `send-keys`, the screen is read
//! with `capture-pane`, and a fake `pi`, first on PATH, records the
//! arguments and directory it was started with.
//!
//! Nothing here waits a fixed time: every step polls the screen (or a
//! file the pane's script writes) for what it expects, up to a generous
//! deadline that only a hung picker reaches. Without tmux the tests say
//! why and pass, except under CI (`CI` set), where they fail (`.ci/run`
//! installs tmux).

use std::process::Command;

use crate::util::tmux::{prompt, tmux_available, Run, Setup, Tmux};

#[test]
fn pick_builds_a_missing_index_then_enter_starts_pi_in_the_sessions_directory() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    assert!(!t.s.index().exists());
    let tmux = t.pick("", 120, 30);
    let screen = tmux.wait_for("the listing of 3 sessions", |s| {
        prompt(s).ends_with("3 sessions") && s.contains("zqgone where did the project go")
    });
    assert!(
        screen.contains("zqgone where did the project go"),
        "{screen}"
    );
    assert!(
        t.file("stderr").contains("indexed 6 messages into"),
        "{}",
        t.file("stderr")
    );
    tmux.type_text("zqalpha renames");
    // One session found, and its preview read (the preview answers
    // after the rows; a capture may also catch a frame half drawn, so
    // everything checked below is waited for).
    let screen = tmux.wait_for("one session found, previewed", |s| {
        prompt(s).starts_with("> zqalpha renames")
            && prompt(s).ends_with(" 1 session")
            && s.contains("▶ user")
            && s.contains("Because inotify drops events")
    });
    let row = screen
        .lines()
        .find(|l| l.starts_with("> zqalpha why does the watcher"))
        .unwrap_or_else(|| panic!("no selected row for alpha:\n{screen}"));
    assert!(row.contains("alpha"), "its directory: {row}");
    assert!(row.contains("2026-01-05"), "its date: {row}");
    // The preview beside the list, at the hit, with the answer after it.
    assert!(screen.contains('│'), "{screen}");
    // NO_COLOR: bold, underline and reverse, never a colour.
    let styled = tmux.capture_styled();
    assert!(styled.contains("\x1b["), "attributes are drawn: {styled:?}");
    for colour in ["38;5;", "48;5;", "[31m", "[35m", "[32m"] {
        assert!(!styled.contains(colour), "{colour} drawn under NO_COLOR");
    }
    assert!(screen.contains("Because inotify drops events"), "{screen}");
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "pi's own exit: {}", t.file("stderr"));
    let (args, cwd) = t.pi_record();
    assert_eq!(args, ["--session", t.alpha.to_str().unwrap()]);
    assert_eq!(cwd, t.alpha_dir);
    t.assert_terminal_restored();
}

#[test]
fn enter_resumes_an_oh_my_pi_session_in_omp() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    // beta, as Oh My Pi writes it: its title slot first.
    let body = std::fs::read_to_string(&t.beta).unwrap();
    std::fs::write(
        &t.beta,
        format!("{{\"type\":\"title\",\"v\":1,\"title\":\"Release plan\",\"source\":\"user\",\"updatedAt\":\"2026-02-05T09:00:00.000Z\",\"pad\":\"  \"}}\n{body}"),
    )
    .unwrap();
    t.build();
    let tmux = t.pick("zqbeta", 100, 30);
    let screen = tmux.wait_for("beta found, Enter says Oh My Pi", |s| {
        s.lines().any(|l| l.starts_with("> Release plan")) && s.contains("Enter resume in Oh My Pi")
    });
    assert!(
        screen.contains("Enter resume in Oh My Pi · Tab hits"),
        "{screen}"
    );
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "omp's own exit: {}", t.file("stderr"));
    let (args, cwd) = t.record("omp");
    assert_eq!(args, ["--resume", t.beta.to_str().unwrap()]);
    assert_eq!(cwd, t.beta_dir);
    assert!(!t.root().join("pi-record").exists(), "pi was started");
    t.assert_terminal_restored();
}

#[test]
fn pick_print_prints_the_chosen_file_and_starts_nothing() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let run = Run {
        colour: true,
        ..Run::default()
    };
    let tmux = Tmux::start(&t.root(), 100, 30, &t.script("--print zqbeta", run));
    tmux.wait_for("beta found", |s| {
        s.lines()
            .any(|l| l.starts_with("> zqbeta plan the release"))
    });
    // Colour, unless NO_COLOR: the selected row's background.
    let styled = tmux.capture_styled();
    assert!(styled.contains("48;5;236"), "{styled:?}");
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", t.beta.display()));
    assert!(!t.root().join("pi-record").exists(), "pi was started");
    t.assert_terminal_restored();
}

#[test]
fn pick_json_prints_the_chosen_hit() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("--json inotify", 100, 30);
    tmux.wait_for("alpha's answer found", |s| {
        s.lines().any(|l| l.contains("[assistant] Because inotify"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    let hit: serde_json::Value = serde_json::from_str(t.file("stdout").trim()).unwrap();
    assert_eq!(hit["path"], t.alpha.to_str().unwrap());
    assert_eq!(hit["role"], "assistant");
    assert_eq!(hit["line"], 3);
    assert_eq!(hit["text"], "Because inotify drops events under load.");
}

#[test]
fn pick_esc_exits_1_and_ctrl_c_exits_130_with_the_terminal_restored() {
    if !tmux_available() {
        return;
    }
    for (key, code) in [("Escape", 1), ("C-c", 130)] {
        let t = Setup::new();
        t.build();
        let tmux = t.pick("", 100, 30);
        tmux.wait_for("the listing", |s| prompt(s).ends_with("3 sessions"));
        tmux.type_text("zq");
        tmux.wait_for("the query typed", |s| prompt(s).starts_with("> zq"));
        tmux.press(&[key]);
        assert_eq!(t.status(), code, "{key}: {}", t.file("stderr"));
        assert_eq!(t.file("stdout"), "", "{key}");
        assert!(
            !t.root().join("pi-record").exists(),
            "{key}: pi was started"
        );
        t.assert_terminal_restored();
    }
}

#[test]
fn pick_on_a_60x15_terminal_folds_the_preview_away() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("--print", 60, 15);
    let screen = tmux.wait_for("the listing, three rows", |s| {
        prompt(s).ends_with("3 sessions") && s.lines().filter(|l| l.contains("zq")).count() == 3
    });
    assert!(!screen.contains('│'), "no preview at 60x15:\n{screen}");
    for line in screen.lines() {
        assert!(line.chars().count() <= 60, "{line}");
    }
    // Newest first: gone, beta, alpha. The second is beta.
    let rows: Vec<&str> = screen.lines().filter(|l| l.contains("zq")).collect();
    assert!(rows[0].starts_with("> zqgone"), "{screen}");
    assert!(rows[1].starts_with("  zqbeta"), "{screen}");
    tmux.press(&["Down"]);
    tmux.wait_for("beta selected", |s| {
        s.lines().any(|l| l.starts_with("> zqbeta"))
    });
    tmux.press(&["?"]);
    tmux.wait_for("the keys", |s| s.contains("Ctrl-A"));
    tmux.press(&["Escape"]);
    tmux.wait_for("the keys closed", |s| !s.contains("Ctrl-A"));
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", t.beta.display()));
}

#[test]
fn pick_starts_pi_here_when_the_sessions_directory_is_gone_and_says_so() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("--no-refresh zqgone", 100, 30);
    tmux.wait_for("gone found", |s| {
        s.lines().any(|l| l.starts_with("> zqgone where"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    let (args, cwd) = t.pi_record();
    assert_eq!(args, ["--session", t.gone.to_str().unwrap()]);
    assert_eq!(cwd, t.here);
    let err = t.file("stderr");
    assert!(
        err.contains("/nonexistent/zqgone-project does not exist: starting Pi in"),
        "{err}"
    );
}

#[test]
fn pick_without_pi_on_path_says_so_and_prints_the_command() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = Tmux::start(
        &t.root(),
        100,
        30,
        &t.script(
            "zqbeta",
            Run {
                pi: false,
                ..Run::default()
            },
        ),
    );
    tmux.wait_for("beta found", |s| {
        s.lines().any(|l| l.starts_with("> zqbeta"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 2, "{}", t.file("stderr"));
    assert!(
        t.file("stderr").contains("`pi` is not on PATH"),
        "{}",
        t.file("stderr")
    );
    assert_eq!(
        t.file("stdout"),
        format!(
            "cd {} && pi --session {}\n",
            t.beta_dir.display(),
            t.beta.display()
        )
    );
    t.assert_terminal_restored();
}

#[test]
fn pick_restores_the_terminal_when_killed_by_a_signal() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("", 100, 30);
    tmux.wait_for("the listing", |s| prompt(s).ends_with("3 sessions"));
    // The script wrote the picker's pid (a shell that became it by exec).
    let pid = t.file("pid").trim().to_owned();
    assert!(!pid.is_empty(), "no pid written");
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    assert_eq!(t.status(), 128 + 15, "{}", t.file("stderr"));
    t.assert_terminal_restored();
    drop(tmux);
}

#[test]
fn pick_brings_the_index_up_to_date_when_it_opens() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    // Pi wrote a session since the last build.
    let new = t
        .sessions
        .join("--projects--/2026-04-01T09-00-00-000Z_dddd0004.jsonl");
    std::fs::write(
        &new,
        crate::util::tmux::session(
            "dddd0004",
            "2026-04-01",
            t.beta_dir.to_str().unwrap(),
            "zqfresh written after the build",
            "Indexed by the picker's refresh.",
        ),
    )
    .unwrap();
    let tmux = t.pick("--print", 100, 30);
    // The new session is listed, first (the newest). A refresh this
    // small usually ends before the first frame; on a loaded machine it
    // may go on behind the picker, which then lists the session when it
    // commits: either is right, so only the outcome is checked.
    tmux.wait_for("4 sessions, the new one first", |s| {
        prompt(s).ends_with("4 sessions")
            && s.lines()
                .nth(2)
                .is_some_and(|l| l.get(2..).is_some_and(|r| r.starts_with("zqfresh")))
            && !s.contains("bringing the index up to date")
    });
    // The selection may have stayed on the session it was on: to the top.
    tmux.press(&["PgUp"]);
    tmux.wait_for("the new session selected", |s| {
        s.lines().any(|l| l.starts_with("> zqfresh"))
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", new.display()));
}

#[test]
fn pick_follows_pi_while_it_is_open() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("--print", 100, 30);
    tmux.wait_for("the listing of 3 sessions", |s| {
        prompt(s).ends_with("3 sessions")
    });
    // Pi starts a session in a new project folder while the picker is
    // open: it is listed, first (the newest).
    let new = t
        .sessions
        .join("--later--/2026-04-01T09-00-00-000Z_dddd0004.jsonl");
    std::fs::create_dir(new.parent().unwrap()).unwrap();
    std::fs::write(
        &new,
        crate::util::tmux::session(
            "dddd0004",
            "2026-04-01",
            t.beta_dir.to_str().unwrap(),
            "zqlive started while picking",
            "Seen by the watch.",
        ),
    )
    .unwrap();
    tmux.wait_for("4 sessions, the new one first", |s| {
        prompt(s).ends_with("4 sessions")
            && s.lines()
                .nth(2)
                .is_some_and(|l| l.get(2..).is_some_and(|r| r.starts_with("zqlive started")))
    });
    // And appends to an old one: found by a search for what it wrote.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&t.alpha)
        .unwrap();
    use std::io::Write;
    f.write_all(
        br#"{"type":"message","id":"m3","parentId":"m2","timestamp":"2026-01-05T09:00:03.000Z","message":{"role":"user","content":"zqappended while picking","timestamp":0}}"#,
    )
    .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    tmux.type_text("zqappended");
    tmux.wait_for("alpha found by its new message", |s| {
        prompt(s).starts_with("> zqappended") && prompt(s).ends_with(" 1 session")
    });
    tmux.press(&["Enter"]);
    assert_eq!(t.status(), 0, "{}", t.file("stderr"));
    assert_eq!(t.file("stdout"), format!("{}\n", t.alpha.display()));
}

#[test]
fn pick_redraws_on_resize_and_folds_the_preview_when_narrow() {
    if !tmux_available() {
        return;
    }
    let t = Setup::new();
    t.build();
    let tmux = t.pick("zqbeta", 120, 30);
    let preview = |s: &str| s.contains('│') && s.contains("First the changelog");
    tmux.wait_for("beta and its preview", |s| {
        s.lines().any(|l| l.starts_with("> zqbeta")) && preview(s)
    });
    tmux.resize(70, 20);
    let narrow = tmux.wait_for("no preview at 70x20", |s| {
        !s.contains('│') && s.lines().any(|l| l.starts_with("> zqbeta"))
    });
    assert!(narrow.lines().all(|l| l.chars().count() <= 70), "{narrow}");
    tmux.resize(120, 30);
    tmux.wait_for("the preview back at 120x30", preview);
    tmux.press(&["Escape"]);
    assert_eq!(t.status(), 1, "{}", t.file("stderr"));
    t.assert_terminal_restored();
}
