//! `pi-index push` and `--db`, against a real PostgreSQL server: a private
//! cluster (`initdb`, `pg_ctl`) on a loopback port, shared by this
//! module's tests (one database each), plus private clusters for the
//! tests that stop a server or need a replica.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::util::incremental::{append, assistant, setup, user};
use crate::util::pg::{dump, eventually, fresh_like, push, push_ok, Cluster};
use crate::util::{fixtures, json_lines, run, Scratch};

/// The module's cluster, started once; `None` without PostgreSQL (said
/// once; a failure under CI).
/// SQL that makes the rows as a version before 5 pushed them: no pair
/// lexemes, `pushed_schema` 2 (the row version of 2 to 4), no pair words,
/// no `rank_len` (and no `agent` nor `usage`, which versions 7 and 8
/// added).
const BEFORE_PAIRS: &str = "UPDATE pi_messages SET tsv = ts_delete(tsv, ARRAY(SELECT u.lexeme \
     FROM unnest(tsv) u WHERE strpos(u.lexeme, ' ') > 0)); \
     UPDATE pi_windows SET tsv = ts_delete(tsv, ARRAY(SELECT u.lexeme \
     FROM unnest(tsv) u WHERE strpos(u.lexeme, ' ') > 0)); \
     UPDATE pi_sessions SET pushed_schema = 2; \
     DROP TABLE pi_pair_words; DROP INDEX pi_sessions_unpaired; \
     ALTER TABLE pi_messages DROP COLUMN rank_len; ALTER TABLE pi_windows DROP COLUMN rank_len; \
     ALTER TABLE pi_sessions DROP COLUMN agent, DROP COLUMN usage; ";

pub fn cluster() -> Option<&'static Cluster> {
    static C: OnceLock<Option<Cluster>> = OnceLock::new();
    C.get_or_init(|| {
        let c = Cluster::start()?;
        c.stop_after(std::process::id());
        Some(c)
    })
    .as_ref()
}

/// A fresh database of the module's cluster, named after the test.
pub fn database(name: &str) -> Option<String> {
    cluster().map(|c| c.create_db(name))
}

/// `search --db URL --json -n 1000 -- QUERY`: its hits.
pub fn db_search(s: &Scratch, url: &str, query: &str) -> Vec<serde_json::Value> {
    let out = run(s
        .cmd()
        .args(["search", "--json", "-n", "1000", "--db", url, "--"])
        .arg(query));
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "search --db {query}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    json_lines(&out)
}

/// A directory of sessions: the fixture `branch-abandoned.jsonl` and a
/// session whose messages plant `word`.
pub fn sessions_with(s: &Scratch, word: &str) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    let project = dir.join("--home-u-proj--");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        fixtures().join("branch-abandoned.jsonl"),
        project.join("branch-abandoned.jsonl"),
    )
    .unwrap();
    let header = r#"{"type":"session","version":3,"id":"same-id-on-every-host","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/proj"}"#;
    let lines = [
        header.to_owned(),
        user("a1", None, 1, &format!("where is the {word} config")),
        assistant("a2", "a1", 2, &format!("the {word} config is in etc")),
    ];
    std::fs::write(
        project.join("2026-05-01T10-00-00-000Z_same.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    dir
}

fn without(v: &serde_json::Value, keys: &[&str]) -> serde_json::Value {
    let mut v = v.clone();
    for k in keys {
        v.as_object_mut().unwrap().remove(*k);
    }
    v
}

#[test]
fn three_hosts_push_and_a_search_finds_each_host_s_words_with_its_host() {
    let Some(url) = database("three_hosts") else {
        return;
    };
    let hosts = ["alice@laptop", "bob@devbox", "ci@runner-7"];
    let words = ["zqalpha", "zqbravo", "zqcharlie"];
    let mut scratches = Vec::new();
    for (host, word) in hosts.iter().zip(words) {
        let s = Scratch::new();
        let dir = sessions_with(&s, word);
        s.build(&[&dir], &[]);
        let r = push_ok(&s, &url, host);
        assert_eq!(r["host"], *host);
        assert_eq!(r["sessions_new"], 2);
        assert_eq!(r["sessions"], 2);
        scratches.push(s);
    }
    let s = &scratches[0];
    for (host, word) in hosts.iter().zip(words) {
        let hits = db_search(s, &url, word);
        assert_eq!(hits.len(), 2, "{word}: {hits:?}");
        for h in &hits {
            assert_eq!(h["host"], *host);
            assert_eq!(h["session_id"], "same-id-on-every-host");
        }
    }
    // The same objects as the local search, with the host added (the
    // scores are another ranking's).
    let by_line = |mut v: Vec<serde_json::Value>| {
        v.sort_by_key(|h| h["line"].as_u64());
        v
    };
    let local = by_line(scratches[1].search_json("zqbravo", &[]));
    let remote = by_line(db_search(s, &url, "zqbravo"));
    assert_eq!(local.len(), remote.len());
    for (l, r) in local.iter().zip(&remote) {
        assert_eq!(without(l, &["score"]), without(r, &["score", "host"]));
        let mut keys: Vec<&String> = r.as_object().unwrap().keys().collect();
        keys.sort();
        let mut want: Vec<&String> = l.as_object().unwrap().keys().collect();
        let host = "host".to_owned();
        want.push(&host);
        want.sort();
        assert_eq!(keys, want);
    }
    // For people: grouped by session, under its host.
    let out = run(s.cmd().args(["search", "--db", &url, "zqalpha"]));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("alice@laptop  /home/u/proj  "), "{text}");
    assert!(
        text.contains("[user] 2026-05-01 10:01 line 2: where is the zqalpha config"),
        "{text}"
    );
    let out = run(s.cmd().args(["search", "--db", &url, "zqnothing"]));
    assert_eq!(out.status.code(), Some(1));
    // Every host holds the fixture: `host:` keeps one.
    let all = db_search(s, &url, "notify");
    let local_notify = scratches[0].search_json("notify", &[]);
    assert_eq!(all.len(), 3 * local_notify.len());
    let bobs = db_search(s, &url, "notify host:bob@devbox");
    assert_eq!(bobs.len(), local_notify.len());
    assert!(bobs.iter().all(|h| h["host"] == "bob@devbox"));
    let not_bob = db_search(s, &url, "notify -host:bob@devbox");
    assert_eq!(not_bob.len(), 2 * local_notify.len());
    assert!(not_bob.iter().all(|h| h["host"] != "bob@devbox"));
    // The local index has no hosts: it says where host: works.
    let out = run(scratches[0]
        .cmd()
        .args(["search", "host:x", "--index"])
        .arg(scratches[0].index()));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--db"));

    // usage --db: every host's usage as it pushed it, each session under
    // its host, each host's as its own index counts it
    // (tests/team_usage.rs holds every grouping to it).
    let usage = |s: &Scratch, from: &[&std::ffi::OsStr], group: &str| {
        let out = run(s
            .cmd()
            .args(["usage", group, "--json", "--timezone", "UTC"])
            .args(from));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out)
    };
    let db_from = ["--db".as_ref(), url.as_ref()];
    let spent = usage(s, &db_from, "session");
    let local_spent = usage(
        &scratches[1],
        &["--index".as_ref(), scratches[1].index().as_os_str()],
        "session",
    );
    // sessions --sort cost --db: the team's sessions by what each spent
    // itself, most first, each as `usage --db` counts it for its host.
    let out = run(s.cmd().args([
        "sessions", "--sort", "cost", "--all", "--json", "--db", &url,
    ]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let by_cost = json_lines(&out);
    let costed: Vec<&serde_json::Value> = by_cost
        .iter()
        .filter(|r| !r["own_cost"].is_null())
        .collect();
    assert_eq!(costed.len(), spent.len(), "{by_cost:?}");
    for r in &costed {
        let u = spent
            .iter()
            .find(|u| u["host"] == r["host"] && u["path"] == r["path"])
            .unwrap_or_else(|| panic!("{r}"));
        assert_eq!(r["own_cost"], u["own_cost"], "{r}");
        assert_eq!(r["cost"], u["cost"], "{r}");
    }
    let own: Vec<f64> = costed
        .iter()
        .map(|r| r["own_cost"].as_f64().unwrap())
        .collect();
    assert!(own.windows(2).all(|w| w[0] >= w[1]), "{own:?}");
    assert!(!local_spent.is_empty());
    assert_eq!(spent.len(), 3 * local_spent.len());
    let bob: Vec<_> = spent
        .iter()
        .filter(|r| r["host"] == "bob@devbox")
        .map(|r| without(r, &["host"]))
        .collect();
    assert_eq!(bob, local_spent);
    let per_host = usage(s, &db_from, "host");
    assert_eq!(per_host.len(), 3);
    let cost: f64 = local_spent
        .iter()
        .map(|r| r["cost"].as_f64().unwrap())
        .sum();
    for h in &per_host {
        assert!((h["cost"].as_f64().unwrap() - cost).abs() < 1e-9, "{h}");
    }

    // sessions --db: every host's, newest first, each with its host.
    let out = run(s.cmd().args(["sessions", "--json", "--db", &url]));
    assert!(out.status.success());
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 6);
    let local_rows = json_lines(&run(scratches[2]
        .cmd()
        .args(["sessions", "--json", "--index"])
        .arg(scratches[2].index())));
    let ci: Vec<_> = rows
        .iter()
        .filter(|r| r["host"] == "ci@runner-7")
        .map(|r| without(r, &["host"]))
        .collect();
    assert_eq!(ci, local_rows);
    let out = run(s
        .cmd()
        .args(["sessions", "--json", "--db", &url, "--", "zqcharlie"]));
    let found = json_lines(&out);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["host"], "ci@runner-7");
    assert_eq!(found[0]["matches"], 2);
    let local = json_lines(&run(scratches[2]
        .cmd()
        .args(["sessions", "--json", "--index"])
        .arg(scratches[2].index())
        .args(["--", "zqcharlie"])));
    let mut keys: Vec<String> = found[0].as_object().unwrap().keys().cloned().collect();
    let mut want: Vec<String> = local[0].as_object().unwrap().keys().cloned().collect();
    want.push("host".into());
    keys.sort();
    want.sort();
    assert_eq!(keys, want);
    // The same object but for the scores (another ranking's).
    let scores = ["score", "name_score", "title_score"];
    let mut remote = without(&found[0], &["host"]);
    let mut here = local[0].clone();
    for v in [&mut remote, &mut here] {
        *v = without(v, &scores);
        v["hit"] = without(&v["hit"], &["score"]);
    }
    assert_eq!(remote, here);

    // show --db: one host's session, the same documents as locally.
    let out = run(s.cmd().args([
        "show",
        "same-id-on-every-host",
        "--format",
        "json",
        "--branch",
        "all",
        "--db",
        &url,
    ]));
    assert_eq!(out.status.code(), Some(2), "three hosts hold that id");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--host"));
    let out = run(s.cmd().args([
        "show",
        "same-id-on-every-host",
        "--format",
        "json",
        "--branch",
        "all",
        "--db",
        &url,
        "--host",
        "alice@laptop",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs: Vec<_> = json_lines(&out)
        .iter()
        .map(|d| {
            assert_eq!(d["host"], "alice@laptop");
            without(d, &["host"])
        })
        .collect();
    assert_eq!(docs, s.show_json("same-id-on-every-host", &[]));
}

#[test]
fn a_second_push_with_nothing_changed_moves_nothing() {
    let Some(url) = database("no_change") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    let first = push_ok(&s, &url, "h");
    assert!(first["messages_sent"].as_u64().unwrap() > 100, "{first}");
    let before = dump(c, "no_change");
    // Every statement run in this database is logged from now on: a push
    // with nothing to send must be one.
    c.sql(
        "no_change",
        "ALTER DATABASE no_change SET log_statement = 'all'",
    );
    let log = c.data.join("server.log");
    let statements = || {
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.contains("LOG:  execute") || l.contains("LOG:  statement:"))
            .filter(|l| l.contains("pi_sessions"))
            .count()
    };
    let logged = statements();
    let second = push_ok(&s, &url, "h");
    assert_eq!(statements() - logged, 1, "one statement, the state query");
    assert_eq!(second["sessions_unchanged"], first["sessions"]);
    for key in [
        "sessions_new",
        "sessions_grown",
        "sessions_replaced",
        "sessions_moved",
        "sessions_deleted",
        "messages_sent",
        "bytes_sent",
        "transactions",
    ] {
        assert_eq!(second[key], 0, "{key}: {second}");
    }
    assert_eq!(dump(c, "no_change"), before);
}

/// Push `s`'s index into a fresh database and dump it: what an
/// uninterrupted, from-scratch push gives, with the pair words of the
/// database `like` ([`fresh_like`]).
pub fn fresh_dump(s: &Scratch, name: &str, host: &str, like: &str) -> String {
    let c = cluster().unwrap();
    fresh_like(c, s, name, host, like);
    dump(c, name)
}

#[test]
fn an_append_a_rewrite_a_move_and_a_delete_arrive_exactly() {
    let Some(url) = database("changes") else {
        return;
    };
    let c = cluster().unwrap();
    let t = setup();
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_new"], 2);

    // An append: one new row, nothing else sent.
    append(
        &t.file,
        &(user("a3", Some("a2"), 3, "zqappended question") + "\n"),
    );
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(
        (r["sessions_grown"].as_u64(), r["messages_sent"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_1", "h", "changes")
    );
    assert_eq!(db_search(&t.s, &url, "zqappended").len(), 1);

    // An append that moves the active branch: the old rows' marks follow.
    append(
        &t.file,
        &(user(
            "b1",
            Some("a1"),
            4,
            "zqbranch retry from the first question",
        ) + "\n"),
    );
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_grown"], 1, "{r}");
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_2", "h", "changes")
    );
    let appended = db_search(&t.s, &url, "zqappended");
    assert_eq!(appended[0]["active"], false);

    // An append that edits an old message for the model: the old rows
    // are not as pushed any more, so the session is replaced.
    append(
        &t.file,
        &(r#"{"type":"context_edit","id":"b2","parentId":"b1","timestamp":"2026-05-01T10:05:00.000Z","targetId":"a1","replacement":{"content":"zqreplaced question"}}"#.to_owned() + "\n"),
    );
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_replaced"], 1, "{r}");
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_edit", "h", "changes")
    );
    let replaced = db_search(&t.s, &url, "zqreplaced");
    assert_eq!(replaced.len(), 1);
    assert_eq!(replaced[0]["edited"], "replaced");
    assert_eq!(replaced[0], {
        let mut local = t.s.search_json("zqreplaced", &[])[0].clone();
        local["host"] = "h".into();
        local["score"] = replaced[0]["score"].clone();
        local
    });

    // A rewrite (fewer bytes): the session's rows replaced.
    let header = crate::util::incremental::HEADER;
    std::fs::write(
        &t.file,
        [header.to_owned(), user("c1", None, 1, "zqrewritten only")].join("\n") + "\n",
    )
    .unwrap();
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_replaced"], 1, "{r}");
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_3", "h", "changes")
    );
    assert!(db_search(&t.s, &url, "zqappended").is_empty());

    // A move: only the path changes.
    let other = t.file.parent().unwrap().join("other.jsonl");
    let moved = t.file.parent().unwrap().join("moved-other.jsonl");
    std::fs::rename(&other, &moved).unwrap();
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(
        (r["sessions_moved"].as_u64(), r["messages_sent"].as_u64()),
        (Some(1), Some(0)),
        "{r}"
    );
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_4", "h", "changes")
    );

    // A delete: its rows gone.
    std::fs::remove_file(&moved).unwrap();
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_deleted"], 1, "{r}");
    assert_eq!(
        dump(c, "changes"),
        fresh_dump(&t.s, "changes_5", "h", "changes")
    );
    assert_eq!(c.sql("changes", "SELECT count(*) FROM pi_sessions"), "1");
}

#[test]
fn hostile_text_and_queries_are_data_never_sql() {
    let Some(url) = database("hostile") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let header = r#"{"type":"session","version":3,"id":"it's-\\-id","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/o'brien/x\\y"}"#;
    let texts = [
        r#"zqquote it's a \"quoted\" word"#,
        r#"zqslash back\\slash \\N and \\t tab"#,
        r#"zqnul a\u0000nul byte"#,
        r#"zqdrop '); DROP TABLE pi_messages; --"#,
    ];
    let mut lines = vec![header.to_owned()];
    for (i, t) in texts.iter().enumerate() {
        lines.push(format!(
            r#"{{"type":"message","id":"m{i}","parentId":{},"timestamp":"2026-05-01T10:0{i}:00.000Z","message":{{"role":"user","content":"{t}","timestamp":0}}}}"#,
            if i == 0 { "null".to_owned() } else { format!("\"m{}\"", i - 1) }
        ));
    }
    std::fs::write(dir.join("hostile.jsonl"), lines.join("\n") + "\n").unwrap();
    s.build(&[&dir], &[]);
    let r = push_ok(&s, &url, "o'host\\; DROP");
    assert_eq!(r["messages_sent"], 4);
    for word in ["zqquote", "zqslash", "zqdrop"] {
        let local = s.search_json(word, &[]);
        let remote = db_search(&s, &url, word);
        assert_eq!(remote.len(), 1, "{word}");
        assert_eq!(remote[0]["host"], "o'host\\; DROP");
        assert_eq!(remote[0]["text"], local[0]["text"], "{word}");
        assert_eq!(remote[0]["cwd"], "/home/o'brien/x\\y");
    }
    // PostgreSQL's text holds no NUL: it is kept as U+FFFD.
    let nul = db_search(&s, &url, "zqnul");
    assert_eq!(nul[0]["text"], "zqnul a\u{FFFD}nul byte");
    // Hostile queries: found as words, or nothing, never an error.
    for q in [
        "'); DROP TABLE pi_messages; --",
        r#""it's" OR \'"#,
        "cwd:\"/home/o'brien/x\\y\" zqquote",
        "session:it's-\\ zqquote",
        "host:\"o'host\\;\" zqquote",
        "name:\"'; DROP\"",
        "\\0 \\\\ \\N",
    ] {
        let out = run(s
            .cmd()
            .args(["search", "--json", "--db", &url, "--"])
            .arg(q));
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{q}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let drop = db_search(&s, &url, "'); DROP TABLE pi_messages; --");
    assert_eq!(drop.len(), 1);
    assert_eq!(
        db_search(&s, &url, "cwd:\"/home/o'brien/x\\y\" zqquote").len(),
        1
    );
    assert_eq!(db_search(&s, &url, "session:it's-\\ zqquote").len(), 1);
    assert_eq!(c.sql("hostile", "SELECT count(*) FROM pi_messages"), "4");
    // A query past the local limits is refused as locally, before the
    // database is asked (each word's pieces would be looked up).
    let long = vec!["abcdefghijklmnopqrstuvwxyz0123456789"; 300].join(" ");
    for cmd in ["search", "sessions"] {
        let out = run(s.cmd().args([cmd, "--db", &url, "--"]).arg(&long));
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("the query is too long") && err.contains("at most 4096 bytes"),
            "{cmd}: {err}"
        );
    }
}

/// A session whose one message is `words` long, planting a phrase at its
/// end, and others that bring the table to a size the planner indexes.
fn big_sessions(s: &Scratch) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let header = |id: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/big"}}"#
        )
    };
    let long: Vec<String> = (0..20_000).map(|i| format!("w{}", i % 5000)).collect();
    let text = format!("{} zqfar zqaway", long.join(" "));
    std::fs::write(
        dir.join("long.jsonl"),
        [header("long"), user("l1", None, 1, &text)].join("\n") + "\n",
    )
    .unwrap();
    for f in 0..20 {
        let mut lines = vec![header(&format!("many-{f}"))];
        let mut parent: Option<String> = None;
        for i in 0..200 {
            let id = format!("e{i}");
            lines.push(user(
                &id,
                parent.as_deref(),
                i % 60,
                &format!(
                    "common words number {} of file {f} w{}",
                    i,
                    (i * 7 + f) % 997
                ),
            ));
            parent = Some(id);
        }
        std::fs::write(dir.join(format!("many-{f}.jsonl")), lines.join("\n") + "\n").unwrap();
    }
    dir
}

#[test]
fn a_phrase_past_the_16383rd_word_is_found_and_the_gin_index_is_used() {
    let Some(url) = database("long_phrase") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = big_sessions(&s);
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "h");
    let windowed = c.sql(
        "long_phrase",
        "SELECT count(*) FROM pi_messages WHERE windowed",
    );
    assert_eq!(windowed, "1");
    for (q, n) in [
        ("\"zqfar zqaway\"", 1),
        ("\"zqaway zqfar\"", 0),
        ("zqaway", 1),
        ("zqfar -zqaway", 0),
        ("\"w4999 zqfar\"", 1),
        ("zqfar OR zqnothing", 1),
    ] {
        let local = s.search_json(q, &[]);
        let remote = db_search(&s, &url, q);
        assert_eq!(remote.len(), n, "{q}");
        assert_eq!(local.len(), n, "{q} locally");
    }
    // The planner uses the GIN index on the messages' tsvector. (On a
    // table this small a sequential scan costs less: with it off, the
    // plan shows the index serving the statement's condition.)
    c.sql("long_phrase", "ANALYZE");
    c.sql(
        "long_phrase",
        "ALTER DATABASE long_phrase SET enable_seqscan = off",
    );
    let db = pi_index::team::Db::connect(&url).unwrap();
    let plan = pi_index::team::search::explain(
        &db,
        "w123",
        &Default::default(),
        &pi_index::search::query::Now::system(),
        false,
    )
    .unwrap();
    assert!(plan.contains("pi_messages_tsv"), "{plan}");
    // With families in the database, a search merges copies: the
    // statement that does it uses the index too.
    let forks = Scratch::new();
    forks.build(&[&forks_dir()], &[]);
    push_ok(&forks, &url, "forks");
    c.sql("long_phrase", "ANALYZE");
    let plan = pi_index::team::search::explain(
        &db,
        "w123",
        &Default::default(),
        &pi_index::search::query::Now::system(),
        false,
    )
    .unwrap();
    assert!(plan.contains("hits"), "the merging statement: {plan}");
    assert!(plan.contains("pi_messages_tsv"), "{plan}");
}

/// The roles of docs/team.md, as `scripts/team/roles.sql` holds them.
fn roles_sql() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/team/roles.sql"))
        .unwrap()
}

#[test]
fn a_pushing_role_touches_only_its_own_host_s_rows_and_a_reader_only_reads() {
    let Some(url) = database("roles") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = sessions_with(&s, "zqroles");
    s.build(&[&dir], &[]);
    // The owner's first push creates the tables (and bob's rows).
    push_ok(&s, &url, "bob");
    c.sql("roles", &roles_sql());
    c.sql(
        "roles",
        "CREATE ROLE alice LOGIN IN ROLE pi_pusher; CREATE ROLE carol LOGIN IN ROLE pi_reader",
    );
    let bob_rows = c.sql(
        "roles",
        "SELECT count(*) FROM pi_messages WHERE host = 'bob'",
    );
    // Alice pushes as herself.
    let r = push_ok(&s, &c.url_as("alice", "roles"), "alice");
    assert_eq!(r["sessions_new"], 2);
    // ... and cannot push as bob.
    let out = push(&s, &c.url_as("alice", "roles"), "bob");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("row-level security"), "{err}");
    // She sees only her own rows, and removes sessions only through the
    // owner's function, only her own.
    assert_eq!(
        c.sql_as(
            "alice",
            "roles",
            "SELECT count(DISTINCT host) FROM pi_messages"
        )
        .unwrap(),
        "1"
    );
    assert!(c
        .sql_as(
            "alice",
            "roles",
            "DELETE FROM pi_messages WHERE host = 'bob'",
        )
        .unwrap_err()
        .contains("permission denied"));
    let bob_sid = c.sql(
        "roles",
        "SELECT min(sid) FROM pi_sessions WHERE host = 'bob'",
    );
    let err = c
        .sql_as(
            "alice",
            "roles",
            &format!("SELECT pi_remove_sessions('bob', ARRAY[{bob_sid}]::bigint[])"),
        )
        .unwrap_err();
    assert!(
        err.contains(
            "a pushing role removes only the sessions of its own host (alice), not those of bob"
        ),
        "{err}"
    );
    // No lock beyond what her statements take, and none at all for a
    // reader beyond reading: neither can stall the others.
    for table in [
        "pi_sessions",
        "pi_messages",
        "pi_terms",
        "pi_hosts",
        "pi_windows",
    ] {
        for mode in [
            "ACCESS EXCLUSIVE",
            "EXCLUSIVE",
            "SHARE ROW EXCLUSIVE",
            "SHARE",
            "SHARE UPDATE EXCLUSIVE",
        ] {
            for role in ["alice", "carol"] {
                let err = c
                    .sql_as(
                        role,
                        "roles",
                        &format!("BEGIN; LOCK TABLE {table} IN {mode} MODE; COMMIT"),
                    )
                    .unwrap_err();
                assert!(
                    err.contains("permission denied"),
                    "{role} {table} {mode}: {err}"
                );
            }
        }
    }
    assert!(c
        .sql_as(
            "alice",
            "roles",
            "UPDATE pi_sessions SET path = 'x' WHERE host = 'bob'"
        )
        .is_ok());
    assert!(c
        .sql_as(
            "alice",
            "roles",
            "INSERT INTO pi_hosts (host, kinds) VALUES ('bob2', '')"
        )
        .unwrap_err()
        .contains("row-level security"));
    assert_eq!(
        c.sql(
            "roles",
            "SELECT count(*) FROM pi_messages WHERE host = 'bob'"
        ),
        bob_rows
    );
    assert_eq!(
        c.sql(
            "roles",
            "SELECT count(*) FROM pi_sessions WHERE host = 'bob' AND path = 'x'"
        ),
        "0"
    );
    // Her own sessions she removes (through the owner's function), and
    // their terms with them; bob's stay.
    std::fs::remove_file(dir.join("--home-u-proj--/2026-05-01T10-00-00-000Z_same.jsonl")).unwrap();
    s.build(&[&dir], &[]);
    let r = push_ok(&s, &c.url_as("alice", "roles"), "alice");
    assert_eq!(r["sessions_deleted"], 1, "{r}");
    assert_eq!(
        c.sql(
            "roles",
            "SELECT count(*) FROM pi_sessions WHERE host = 'alice'"
        ),
        "1"
    );
    assert_eq!(
        c.sql(
            "roles",
            "SELECT count(*) FROM pi_terms WHERE host = 'alice' AND term = 'zqroles'"
        ),
        "0"
    );
    // Her rows as if pushed before the database held usage: her next
    // push sends it, on her own rows alone.
    c.sql(
        "roles",
        "UPDATE pi_sessions SET usage = NULL WHERE host = 'alice'",
    );
    let r = push_ok(&s, &c.url_as("alice", "roles"), "alice");
    assert_eq!(r["sessions_usage_added"], 1, "{r}");
    assert_eq!(
        c.sql(
            "roles",
            "SELECT count(*) FROM pi_sessions WHERE usage IS NULL"
        ),
        "0"
    );
    // The reader searches everything and writes nothing.
    let out = run(s.cmd().args([
        "usage",
        "host",
        "--json",
        "--db",
        &c.url_as("carol", "roles"),
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_lines(&out).len(), 2);
    let hits = db_search(&s, &c.url_as("carol", "roles"), "zqroles");
    assert_eq!(hits.len(), 2);
    assert!(c
        .sql_as("carol", "roles", "DELETE FROM pi_messages")
        .unwrap_err()
        .contains("permission denied"));
    let out = push(&s, &c.url_as("carol", "roles"), "carol");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_replica_answers_searches_as_the_primary_and_refuses_pushes() {
    let Some(primary) = Cluster::start() else {
        return;
    };
    let url = primary.create_db("team");
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    push_ok(&s, &url, "h");
    let replica = primary.replica();
    let rurl = replica.url("team");
    let want = primary.sql("team", "SELECT count(*) FROM pi_messages");
    eventually(60, || {
        (replica.sql_as("postgres", "team", "SELECT count(*) FROM pi_messages") == Ok(want.clone()))
            .then_some(())
    });
    for q in ["notify", "\"the model\"", "role:user -notify", "*"] {
        assert_eq!(db_search(&s, &rurl, q), db_search(&s, &url, q), "{q}");
    }
    let out = push(&s, &rurl, "h");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("read-only replica"), "{err}");
    assert!(err.contains("push to the primary"), "{err}");
    assert!(err.contains(&format!("port={}", primary.port)), "{err}");
}

#[test]
fn a_newer_schema_is_refused_with_what_to_do() {
    let Some(url) = database("newer") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    // Before any push, a search says to push first.
    let out = run(s.cmd().args(["search", "x", "--db", &url]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `pi-index push` first"));
    push_ok(&s, &url, "h");
    c.sql("newer", "UPDATE pi_index_schema SET version = 99");
    for out in [
        push(&s, &url, "h"),
        run(s.cmd().args(["search", "x", "--db", &url])),
    ] {
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("schema version 99") && err.contains("upgrade pi-index"),
            "{err}"
        );
    }
}

#[test]
fn push_watch_keeps_pushing_and_survives_the_server_going_away() {
    let Some(c) = Cluster::start() else {
        return;
    };
    let url = c.create_db("watch");
    let t = setup();
    t.build(&[]);
    let mut child =
        t.s.cmd()
            .args([
                "push",
                &url,
                "--as",
                "w",
                "--watch",
                "--json",
                "--interval",
                "0.2",
                "--debounce",
                "0.2",
                "--index",
            ])
            .arg(t.s.index())
            .arg("--path")
            .arg(&t.sessions)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let count = |word: &str| {
        c.sql_as(
            "postgres",
            "watch",
            &format!("SELECT count(*) FROM pi_messages WHERE text LIKE '%{word}%'"),
        )
        .ok()
    };
    eventually(60, || (count("alpacas") == Some("2".into())).then_some(()));
    append(
        &t.file,
        &(user("a3", Some("a2"), 3, "zqwatched one") + "\n"),
    );
    eventually(60, || {
        (count("zqwatched") == Some("1".into())).then_some(())
    });
    c.stop();
    append(&t.file, &(user("a4", Some("a3"), 4, "zqwhile away") + "\n"));
    c.restart();
    eventually(60, || (count("zqwhile") == Some("1".into())).then_some(()));
    assert!(child.try_wait().unwrap().is_none(), "still watching");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(count("zq"), Some("2".into()));
}

/// `push --watch` follows the watch of the session directory: with
/// --interval and --floor of an hour, only the watch can have seen the
/// append, and every file was checked once, at the start.
#[test]
fn push_watch_pushes_what_the_watch_sees() {
    let Some(c) = Cluster::start() else {
        return;
    };
    let url = c.create_db("watched");
    let t = setup();
    t.build(&[]);
    let stderr = t.s.dir.path().join("push.err");
    let mut child =
        t.s.cmd()
            .args([
                "push",
                &url,
                "--as",
                "w",
                "--watch",
                "--interval",
                "3600",
                "--floor",
                "3600",
                "--debounce",
                "0.2",
                "--index",
            ])
            .arg(t.s.index())
            .arg("--path")
            .arg(&t.sessions)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
    let count = |word: &str| {
        c.sql_as(
            "postgres",
            "watched",
            &format!("SELECT count(*) FROM pi_messages WHERE text LIKE '%{word}%'"),
        )
        .ok()
    };
    eventually(60, || (count("alpacas") == Some("2".into())).then_some(()));
    append(
        &t.file,
        &(user("a3", Some("a2"), 3, "zqseen by the watch") + "\n"),
    );
    eventually(60, || (count("zqseen") == Some("1".into())).then_some(()));
    assert!(child.try_wait().unwrap().is_none(), "still watching");
    child.kill().unwrap();
    child.wait().unwrap();
    let said = std::fs::read_to_string(&stderr).unwrap();
    let full: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("pi-index: checked every session file"))
        .collect();
    assert_eq!(
        full,
        ["pi-index: checked every session file (the first check since the watch began)"],
        "{said}"
    );
}

#[test]
fn tls_and_passwords_as_libpq_reads_them_and_the_password_is_never_printed() {
    let Some(c) = Cluster::start() else {
        return;
    };
    let Some(tls) = c.enable_tls() else {
        return;
    };
    c.sql("postgres", "CREATE ROLE pw LOGIN PASSWORD 'sekret-pw'");
    c.sql("postgres", "CREATE DATABASE tls OWNER pw");
    // pw connects over TLS with its password, or not at all.
    c.hba_first("hostnossl all pw 127.0.0.1/32 reject");
    c.hba_first("hostssl all pw 127.0.0.1/32 scram-sha-256");
    let s = Scratch::new();
    s.build(&[&fixtures()], &[]);
    let base = |host: &str, query: &str| format!("postgres://pw@{host}:{}/tls?{query}", c.port);
    let cert = tls.root.to_string_lossy();
    let stranger = tls.stranger.to_string_lossy();
    let push_with = |url: &str, env: &[(&str, &str)]| {
        let mut cmd = s.cmd();
        cmd.args(["push", url, "--as", "h", "-q", "--index"])
            .arg(s.index())
            .env_remove("PGPASSWORD");
        for (k, v) in env {
            cmd.env(k, v);
        }
        run(&mut cmd)
    };
    let ok = |out: &std::process::Output, what: &str| {
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    };
    // The password from PGPASSWORD, over TLS, the certificate checked.
    let out = push_with(
        &base(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={cert}"),
        ),
        &[("PGPASSWORD", "sekret-pw")],
    );
    ok(&out, "verify-full");
    let out = push_with(
        &base("localhost", "sslmode=disable"),
        &[("PGPASSWORD", "sekret-pw")],
    );
    assert_eq!(out.status.code(), Some(2), "without TLS, pw is rejected");
    // From ~/.pgpass.
    std::fs::write(
        s.home().join(".pgpass"),
        format!("localhost:{}:tls:pw:sekret-pw\n", c.port),
    )
    .unwrap();
    ok(
        &push_with(&base("localhost", "sslmode=require"), &[]),
        "require, .pgpass",
    );
    // SCRAM-SHA-256-PLUS: the password's exchange bound to this TLS
    // connection (its server certificate).
    ok(
        &push_with(
            &base("localhost", "sslmode=require&channel_binding=require"),
            &[],
        ),
        "channel binding",
    );
    // verify-ca checks the chain, not the host name; verify-full both.
    ok(
        &push_with(
            &base(
                "127.0.0.1",
                &format!("sslmode=verify-ca&sslrootcert={cert}"),
            ),
            &[("PGPASSWORD", "sekret-pw")],
        ),
        "verify-ca",
    );
    for (url, why, said) in [
        (
            base(
                "127.0.0.1",
                &format!("sslmode=verify-full&sslrootcert={cert}"),
            ),
            "host name",
            "verify-ca",
        ),
        (
            base("localhost", "sslmode=verify-full"),
            "no root certificate",
            "sslrootcert",
        ),
        (
            base(
                "localhost",
                &format!("sslmode=verify-ca&sslrootcert={stranger}"),
            ),
            "verify-ca, another CA",
            "sslrootcert",
        ),
        (
            base(
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={stranger}"),
            ),
            "verify-full, another CA",
            "sslrootcert",
        ),
    ] {
        let out = push_with(&url, &[("PGPASSWORD", "sekret-pw")]);
        assert_eq!(out.status.code(), Some(2), "{why}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot connect to the database at pw@") && err.contains(said),
            "{why}: {err}"
        );
    }
    // Several roots in one file, the server's CA not first; and
    // ~/.postgresql/root.crt without sslrootcert.
    let both = s.home().join("both.crt");
    let pem = |p: &Path| std::fs::read_to_string(p).unwrap();
    std::fs::write(&both, pem(&tls.stranger) + &pem(&tls.root)).unwrap();
    ok(
        &push_with(
            &base(
                "localhost",
                &format!("sslmode=verify-full&sslrootcert={}", both.display()),
            ),
            &[("PGPASSWORD", "sekret-pw")],
        ),
        "verify-full, two roots",
    );
    std::fs::create_dir_all(s.home().join(".postgresql")).unwrap();
    std::fs::copy(&tls.root, s.home().join(".postgresql/root.crt")).unwrap();
    ok(
        &push_with(
            &base("localhost", "sslmode=verify-full"),
            &[("PGPASSWORD", "sekret-pw")],
        ),
        "verify-full, ~/.postgresql/root.crt",
    );
    // A server whose certificate is a CA's, self-signed: refused by
    // verify-full even with it as the root (rustls takes a CA's only to
    // sign), said with what to do; require still encrypts.
    let own = c.self_signed_tls();
    let url = base(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", own.display()),
    );
    // (Until the reload, the server shows the old certificate, which
    // this root did not sign.)
    let err = eventually(30, || {
        let out = push_with(&url, &[("PGPASSWORD", "sekret-pw")]);
        assert!(!out.status.success(), "a CA's certificate taken");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (!err.contains("UnknownIssuer")).then_some(err)
    });
    assert!(
        err.contains("cannot connect to the database at pw@")
            && err.contains("is a CA's")
            && err.contains("sslmode=require"),
        "{err}"
    );
    ok(
        &push_with(&base("localhost", "sslmode=require"), &[]),
        "require, self-signed",
    );
    // A wrong password, in the URL: refused, said, never printed.
    let url = format!(
        "postgres://pw:wrong-secret@localhost:{}/tls?sslmode=require",
        c.port
    );
    let out = push_with(&url, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("password"), "{err}");
    assert!(
        !err.contains("wrong-secret") && !err.contains("sekret-pw"),
        "{err}"
    );
    // TLS asked of a server without it.
    let Some(url) = database("no_tls") else {
        return;
    };
    let out = push_with(&format!("{url}?sslmode=require"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

fn forks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/forks")
}

const PARENT: &str = "f0a1b2c3-0000-4000-8000-000000000001";
const INFERRED: &str = "f0a1b2c3-0000-4000-8000-0000000000aa";
const EDITED: &str = "f0a1b2c3-0000-4000-8000-0000000000bb";
const ORPHAN: &str = "f0a1b2c3-0000-4000-8000-0000000000cc";
const UNRELATED: &str = "f0a1b2c3-0000-4000-8000-0000000000dd";

/// `sessions --json` of the local index, or with `--db` (then each row
/// loses its `host`, which must be `host`).
fn sessions_json(s: &Scratch, db: Option<(&str, &str)>, query: &[&str]) -> Vec<serde_json::Value> {
    let mut cmd = s.cmd();
    cmd.args(["sessions", "--json", "--all"]);
    match db {
        Some((url, _)) => cmd.args(["--db", url]),
        None => cmd.arg("--index").arg(s.index()),
    };
    if !query.is_empty() {
        cmd.arg("--").args(query);
    }
    let out = run(&mut cmd);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "sessions: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = json_lines(&out);
    match db {
        Some((_, host)) => rows
            .iter()
            .filter(|r| r["host"] == host)
            .map(|r| without(r, &["host"]))
            .collect(),
        None => rows,
    }
}

/// A hit without its score (each side's own ranking), and with `host`
/// taken off when it is `host`.
fn unscored(h: &serde_json::Value, host: Option<&str>) -> serde_json::Value {
    if let Some(host) = host {
        assert_eq!(h["host"], host, "{h}");
    }
    without(h, &["score", "host"])
}

/// Hits as a set: sorted by their JSON.
/// The hits of `query` locally and with `--db` (pushed as `host`), in
/// their orders, without scores.
fn local_and_db(
    s: &Scratch,
    url: &str,
    host: &str,
    query: &str,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let local = s.search_json(query, &[]);
    let db = db_search(s, url, query);
    (
        local.iter().map(|h| unscored(h, None)).collect(),
        db.iter().map(|h| unscored(h, Some(host))).collect(),
    )
}

fn as_set(mut v: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    v.sort_by_key(|h| h.to_string());
    v
}

#[test]
fn the_database_holds_the_local_families_and_merges_copies_as_locally() {
    let Some(url) = database("families") else {
        return;
    };
    let s = Scratch::new();
    let r = s.build(&[&forks_dir()], &[]);
    assert_eq!(r["files_indexed"], 5, "{r}");
    push_ok(&s, &url, "h");
    // A second host with the same files: its families are its own.
    push_ok(&s, &url, "g");

    // sessions --db: the local rows, parent and forks included.
    let local = sessions_json(&s, None, &[]);
    let remote = sessions_json(&s, Some((&url, "h")), &[]);
    assert_eq!(remote, local);
    assert_eq!(sessions_json(&s, Some((&url, "g")), &[]), local);
    let parent = local.iter().find(|r| r["session_id"] == PARENT).unwrap();
    assert_eq!(parent["forks"].as_array().unwrap().len(), 2, "{parent}");

    // search --db: a copied message is one hit per host, with its copies,
    // the local hit's object.
    for word in [
        "zqforkshared",
        "zqforkanswer",
        "zqforktimeout",
        "zqforkinferredown",
        "zqforkyes",
        "zqforkcollide",
        "zqforkgrown",
        "zqnothing",
        "* family:f0a1b2c3-0000-4000-8000-0000000000aa",
        "* family:f0a1b2c3-0000-4000-8000-0000000000cc",
        "* -family:f0a1b2c3-0000-4000-8000-000000000001",
        "zqforkshared cwd:/home/u/forks",
    ] {
        let here = as_set(
            s.search_json(word, &[])
                .iter()
                .map(|h| unscored(h, None))
                .collect(),
        );
        let there = as_set(
            db_search(&s, &url, &format!("{word} host:h"))
                .iter()
                .map(|h| unscored(h, Some("h")))
                .collect(),
        );
        assert_eq!(there, here, "{word}");
        let both = db_search(&s, &url, word);
        assert_eq!(both.len(), 2 * here.len(), "{word}");
    }
    let shared = db_search(&s, &url, "zqforkshared host:g");
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0]["session_id"], PARENT);
    let copies: Vec<_> = shared[0]["copies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["session_id"].as_str().unwrap(),
                c["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(copies, [(INFERRED, 2), (EDITED, 2)]);
    // Filters per copy: only the edited fork is in /home/u/forks-b.
    let b = db_search(&s, &url, "zqforkshared cwd:/home/u/forks-b host:g");
    assert_eq!(b.len(), 1);
    assert_eq!(
        (&b[0]["session_id"], &b[0]["copies"]),
        (&EDITED.into(), &serde_json::json!([]))
    );
    // --copies: every copy its own hit.
    let out = run(s.cmd().args([
        "search",
        "--json",
        "--copies",
        "-n",
        "100",
        "--db",
        &url,
        "--",
        "zqforkshared host:h",
    ]));
    let every = json_lines(&out);
    assert_eq!(every.len(), 3);
    assert!(every.iter().all(|h| h["copies"] == serde_json::json!([])));

    // Counts and pages are of hits after merging, the same hits as
    // locally, each once.
    let family = format!("* family:{INFERRED} host:h");
    let all = db_search(&s, &url, &family);
    assert_eq!(all.len(), 7);
    let copies: usize = all
        .iter()
        .map(|h| h["copies"].as_array().unwrap().len())
        .sum();
    assert_eq!(copies, 5);
    let mut paged = Vec::new();
    for offset in 0..7 {
        let out = run(s.cmd().args([
            "search",
            "--json",
            "--sort",
            "oldest",
            "-n",
            "1",
            "--offset",
            &offset.to_string(),
            "--db",
            &url,
            "--",
            &family,
        ]));
        let page = json_lines(&out);
        assert_eq!(page.len(), 1, "offset {offset}");
        paged.extend(page);
    }
    assert_eq!(as_set(paged), as_set(all));
    let out = run(s.cmd().args([
        "search", "-n", "1", "--offset", "50", "--db", &url, "--", &family,
    ]));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("past the last hit (7 hits)"), "{err}");
    let out = run(s.cmd().args([
        "search",
        "-n",
        "2",
        "--color",
        "never",
        "--db",
        &url,
        &format!("* family:{PARENT} host:h"),
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("2 of 7 hits shown"), "{text}");
    let out = run(s.cmd().args([
        "search",
        "--color",
        "never",
        "--db",
        &url,
        "zqforkshared host:h",
    ]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[also in 2 forks]: How do I retry a flaky test? zqforkshared"),
        "{text}"
    );

    // sessions --db QUERY: the local objects but for the scores, copies
    // of each session's best message included.
    for q in ["zqforkshared", "zqforktimeout", "retry"] {
        let strip = |v: &serde_json::Value| {
            let mut v = without(v, &["score", "name_score", "title_score"]);
            if v["hit"].is_object() {
                v["hit"] = without(&v["hit"], &["score"]);
            }
            v
        };
        let here: Vec<_> = as_set(sessions_json(&s, None, &[q]).iter().map(strip).collect());
        let there: Vec<_> = as_set(
            sessions_json(&s, Some((&url, "h")), &[q])
                .iter()
                .map(strip)
                .collect(),
        );
        assert_eq!(there, here, "{q}");
        assert!(!here.is_empty(), "{q}");
    }

    // show --db: the local header's family lines.
    for id in [PARENT, INFERRED, EDITED, ORPHAN, UNRELATED] {
        let family = |out: std::process::Output| -> Vec<String> {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .take_while(|l| !l.is_empty())
                .filter(|l| l.starts_with("forked from") || l.contains(" fork"))
                .map(str::to_owned)
                .collect()
        };
        let here = family(run(s.cmd().args(["show", id, "--index"]).arg(s.index())));
        let there = family(run(s.cmd().args(["show", id, "--db", &url, "--host", "h"])));
        assert_eq!(there, here, "{id}");
        if id != UNRELATED {
            assert!(!here.is_empty(), "{id}");
        }
    }
}

#[test]
fn lineage_follows_forks_that_come_and_go_exactly_as_a_fresh_push() {
    let Some(url) = database("lineage_steps") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    let proj = dir.join("--home-u-forks--");
    std::fs::create_dir_all(&proj).unwrap();
    let put = |name: &str| {
        std::fs::copy(forks_dir().join(name), proj.join(name)).unwrap();
    };
    let mut step = 0;
    let mut check = |what: &str| -> serde_json::Value {
        s.build(&[&dir], &[]);
        let r = push_ok(&s, &url, "h");
        step += 1;
        assert_eq!(
            dump(c, "lineage_steps"),
            fresh_dump(&s, &format!("lineage_steps_{step}"), "h", "lineage_steps"),
            "{what}"
        );
        assert_eq!(
            sessions_json(&s, Some((&url, "h")), &[]),
            sessions_json(&s, None, &[]),
            "{what}"
        );
        r
    };
    // A fork alone, then its parent: the fork's row gains a parent
    // though its file did not change.
    put("fork-inferred-no-parent-session.jsonl");
    check("fork alone");
    put("fork-parent.jsonl");
    let r = check("parent after its fork");
    assert_eq!(
        (r["sessions_new"].as_u64(), r["sessions_relinked"].as_u64()),
        (Some(1), Some(1)),
        "{r}"
    );
    // A stated fork written after its parent was pushed: the parent's
    // row gains a fork.
    put("fork-edited-copy.jsonl");
    let r = check("fork after its parent");
    // The parent (a new fork), and the inferred fork too when the new
    // session's key (a hash of its path) is the family's smallest, which
    // names the family.
    let key = |name: &str| {
        let path = std::fs::canonicalize(proj.join(name)).unwrap();
        pi_index::index::schema::session_key(&path.to_string_lossy())
    };
    let renamed = key("fork-edited-copy.jsonl")
        < key("fork-parent.jsonl").min(key("fork-inferred-no-parent-session.jsonl"));
    assert_eq!(r["sessions_relinked"], 1 + u64::from(renamed), "{r}");
    assert_eq!(db_search(&s, &url, "zqforkshared").len(), 1);
    // The parent moves: its forks follow it.
    let moved = dir.join("--home-u-elsewhere--");
    std::fs::create_dir_all(&moved).unwrap();
    std::fs::rename(
        proj.join("fork-parent.jsonl"),
        moved.join("fork-parent.jsonl"),
    )
    .unwrap();
    let r = check("parent moved");
    assert_eq!(r["sessions_moved"], 1, "{r}");
    // The parent is deleted: the stated fork keeps its parent's path.
    std::fs::remove_file(moved.join("fork-parent.jsonl")).unwrap();
    let r = check("parent deleted");
    assert_eq!(r["sessions_deleted"], 1, "{r}");
    // Nothing changed: nothing sent.
    let r = push_ok(&s, &url, "h");
    assert_eq!(
        (r["transactions"].as_u64(), r["sessions_relinked"].as_u64()),
        (Some(0), Some(0)),
        "{r}"
    );
}

/// A session file named `name` (`session_info`) whose first user message
/// is `title`, followed by `messages`.
fn named_session(id: &str, name: Option<&str>, title: &str, messages: &[&str]) -> String {
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/home/u/rank"}}"#
    )];
    lines.push(user("t1", None, 1, title));
    let mut parent = "t1".to_owned();
    for (i, m) in messages.iter().enumerate() {
        let id = format!("r{i}");
        lines.push(assistant(&id, &parent, 2 + i as u32, m));
        parent = id;
    }
    if let Some(name) = name {
        lines.push(format!(
            r#"{{"type":"session_info","id":"n1","parentId":"{parent}","timestamp":"2026-05-01T10:50:00.000Z","name":"{name}"}}"#
        ));
    }
    lines.join("\n") + "\n"
}

/// A session of [`named_session`]: its id (and file name), name, title
/// and messages.
type Named<'a> = (&'a str, Option<&'a str>, &'a str, &'a [&'a str]);

/// A directory of `sessions`, each written by [`named_session`] to
/// `<id>.jsonl`.
fn named_sessions(s: &Scratch, sessions: &[Named]) -> PathBuf {
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    for (id, name, title, messages) in sessions {
        std::fs::write(
            dir.join(format!("{id}.jsonl")),
            named_session(id, *name, title, messages),
        )
        .unwrap();
    }
    dir
}

#[test]
fn sessions_db_query_ranks_names_then_titles_then_messages_as_locally() {
    let Some(url) = database("ranking") else {
        return;
    };
    let s = Scratch::new();
    let dir = named_sessions(
        &s,
        &[
            // By its messages alone: the word many times, in many messages.
            (
                "busy",
                None,
                "a question",
                &[
                    "zqrank zqrank zqrank",
                    "zqrank again",
                    "zqrank and zqrank",
                    "more zqrank",
                ],
            ),
            // By its first user message.
            ("titled", None, "zqrank in the title", &["an answer"]),
            // By its name: the word nowhere else.
            (
                "named",
                Some("zqrank notes"),
                "something else",
                &["nothing here"],
            ),
        ],
    );
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "h");
    let order = |rows: &[serde_json::Value]| -> Vec<(String, String)> {
        rows.iter()
            .map(|r| {
                (
                    r["session_id"].as_str().unwrap().to_owned(),
                    r["matched"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let local = sessions_json(&s, None, &["zqrank"]);
    let remote = sessions_json(&s, Some((&url, "h")), &["zqrank"]);
    let want = [
        ("named".to_owned(), "name".to_owned()),
        ("titled".to_owned(), "title".to_owned()),
        ("busy".to_owned(), "messages".to_owned()),
    ];
    assert_eq!(order(&local), want);
    assert_eq!(order(&remote), want);
    // The name's score counts; a session found by its name alone has no
    // hit, and its title for a snippet.
    assert!(
        remote[0]["name_score"].as_f64().unwrap() > 0.0,
        "{}",
        remote[0]
    );
    assert_eq!(remote[0]["hit"], serde_json::Value::Null);
    assert_eq!(remote[0]["snippet"], "something else");
    assert_eq!(remote[0]["matches"], 0);
    assert!(
        remote[1]["title_score"].as_f64().unwrap() > 0.0,
        "{}",
        remote[1]
    );
    assert_eq!(remote[2]["matches"], 4);
    assert_eq!(remote[2]["name_score"], 0.0);
    // A phrase of the name, and a filter on messages (which no name
    // matches: found by messages alone, as locally).
    for q in [
        "\"zqrank notes\"",
        "zqrank role:assistant",
        "name:notes",
        "zqrank -name:notes",
    ] {
        assert_eq!(
            order(&sessions_json(&s, Some((&url, "h")), &[q])),
            order(&sessions_json(&s, None, &[q])),
            "{q}"
        );
    }
    // -n keeps the best.
    let out = run(s
        .cmd()
        .args(["sessions", "--json", "-n", "1", "--db", &url, "zqrank"]));
    assert_eq!(order(&json_lines(&out)), want[..1]);
}

#[test]
fn a_version_1_database_is_migrated_and_its_rows_pushed_again() {
    let Some(url) = database("migrate") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    s.build(&[&forks_dir()], &[]);
    push_ok(&s, &url, "h");
    // The tables as version 1 made them (what this version added, taken
    // away).
    c.sql("migrate", BEFORE_PAIRS);
    c.sql(
        "migrate",
        "DROP TABLE pi_terms; \
         DROP INDEX pi_sessions_family; DROP INDEX pi_messages_recent; DROP INDEX pi_windows_tsv; \
         ALTER TABLE pi_messages DROP COLUMN copy; \
         ALTER TABLE pi_sessions DROP COLUMN pushed_schema, DROP COLUMN title_tsv, \
         DROP COLUMN parent_session, DROP COLUMN parent_path, DROP COLUMN parent_how, \
         DROP COLUMN fork_ids, DROP COLUMN fork_paths, DROP COLUMN family, DROP COLUMN family_age; \
         UPDATE pi_index_schema SET version = 1",
    );
    let out = run(s.cmd().args(["search", "zqforkshared", "--db", &url]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("older schema (1)") && err.contains("pi-index push"),
        "{err}"
    );
    // The next push migrates, and replaces the rows pushed under 1.
    let r = push_ok(&s, &url, "h");
    assert_eq!(r["sessions_replaced"], 5, "{r}");
    assert_eq!(
        c.sql("migrate", "SELECT version FROM pi_index_schema"),
        pi_index::team::schema::VERSION.to_string()
    );
    assert_eq!(
        dump(c, "migrate"),
        fresh_dump(&s, "migrate_fresh", "h", "migrate")
    );
    assert_eq!(db_search(&s, &url, "zqforkshared").len(), 1);
}

#[test]
fn a_search_ranks_the_pool_of_newest_matches_and_every_match_stays_found() {
    let Some(url) = database("pool") else {
        return;
    };
    // 205 messages of one word, a minute apart: the 100th and the oldest
    // say it three times (the best rank), the others once.
    let pool = pi_index::team::search::POOL;
    let n = pool + 5;
    let s = Scratch::new();
    let project = s.dir.path().join("sessions/--home-u-pool--");
    std::fs::create_dir_all(&project).unwrap();
    let mut lines = vec![r#"{"type":"session","version":3,"id":"pool-session","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/home/u/pool"}"#.to_owned()];
    for i in 0..n {
        let parent = if i == 0 {
            "null".to_owned()
        } else {
            format!("\"m{}\"", i - 1)
        };
        let text = if i == 0 || i == 100 {
            "zqpool zqpool zqpool"
        } else {
            "zqpool once here"
        };
        lines.push(format!(
            r#"{{"type":"message","id":"m{i}","parentId":{parent},"timestamp":"2026-05-01T{:02}:{:02}:00.000Z","message":{{"role":"user","content":"{text}","timestamp":0}}}}"#,
            i / 60,
            i % 60
        ));
    }
    std::fs::write(project.join("pool.jsonl"), lines.join("\n") + "\n").unwrap();
    s.build(&[&s.dir.path().join("sessions")], &[]);
    push_ok(&s, &url, "h");
    // Message i is on line i + 2.
    let order = |hits: &[serde_json::Value]| -> Vec<u64> {
        hits.iter()
            .map(|h| h["line"].as_u64().unwrap() - 2)
            .collect()
    };
    let remote = order(&db_search(&s, &url, "zqpool"));
    // Every match is found, as locally.
    let mut local = order(&s.search_json("zqpool", &[]));
    let mut all = remote.clone();
    all.sort_unstable();
    local.sort_unstable();
    assert_eq!(all, local);
    assert_eq!(all, (0..n as u64).collect::<Vec<_>>());
    // The newest POOL ranked (the 100th first, then the others newest
    // first), then the older ones newest first: the oldest, as good a
    // match as the 100th, is last.
    let mut want = vec![100];
    want.extend((5..n as u64).rev().filter(|&i| i != 100));
    want.extend((0..5).rev());
    assert_eq!(remote, want);
    // A page past the pool is the same order.
    let out = run(s.cmd().args([
        "search", "--json", "-n", "3", "--offset", "201", "--db", &url, "--", "zqpool",
    ]));
    assert_eq!(order(&json_lines(&out)), want[201..204]);
    // The total is the pool's: "more than" when more match.
    let out = run(s.cmd().args(["search", "--db", &url, "--", "zqpool"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("20 of more than {pool} hits shown")),
        "{text}"
    );
    let out = run(s
        .cmd()
        .args(["search", "-n", "2", "--db", &url, "--", "\"zqpool zqpool\""]));
    // Fewer matches than the pool: counted exactly (2 hits, all shown).
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("hits shown"), "{text}");
    let out = run(s
        .cmd()
        .args(["search", "-n", "1", "--db", &url, "--", "\"zqpool zqpool\""]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 of 2 hits shown"), "{text}");
    // Newest and oldest are exact orders over every match.
    let out = run(s.cmd().args([
        "search", "--json", "-n", "1000", "--sort", "oldest", "--db", &url, "--", "zqpool",
    ]));
    assert_eq!(order(&json_lines(&out)), (0..n as u64).collect::<Vec<_>>());
    let out = run(s.cmd().args([
        "search", "--json", "-n", "1000", "--sort", "newest", "--db", &url, "--", "zqpool",
    ]));
    assert_eq!(
        order(&json_lines(&out)),
        (0..n as u64).rev().collect::<Vec<_>>()
    );
}

#[test]
fn a_version_2_database_is_migrated_to_the_recency_index_the_terms_and_the_pairs() {
    let Some(url) = database("migrate2") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    s.build(&[&forks_dir()], &[]);
    push_ok(&s, &url, "h");
    // The tables and rows as version 2 made them.
    c.sql("migrate2", BEFORE_PAIRS);
    c.sql(
        "migrate2",
        "DROP INDEX pi_messages_recent; DROP INDEX pi_windows_tsv; DROP TABLE pi_terms; \
         UPDATE pi_index_schema SET version = 2",
    );
    let out = run(s.cmd().args(["search", "zqforkshared", "--db", &url]));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("older schema (2)") && err.contains("pi-index push"),
        "{err}"
    );
    // The next push adds the indexes, counts the terms of the rows there
    // as the push counted them, and chooses the pair words from them;
    // then it replaces the rows, which hold no pairs, and they are as a
    // fresh push makes them.
    let r = push_ok(&s, &url, "h");
    assert_eq!(r["sessions_replaced"], 5, "{r}");
    assert_eq!(
        c.sql("migrate2", "SELECT version FROM pi_index_schema"),
        pi_index::team::schema::VERSION.to_string()
    );
    assert_eq!(
        c.sql(
            "migrate2",
            "SELECT count(*) FROM pg_indexes WHERE indexname IN \
             ('pi_messages_recent', 'pi_windows_tsv', 'pi_sessions_unpaired')"
        ),
        "3"
    );
    assert_eq!(
        dump(c, "migrate2"),
        fresh_dump(&s, "migrate2_fresh", "h", "migrate2")
    );
    assert_eq!(db_search(&s, &url, "zqforkshared").len(), 1);
}

#[test]
fn a_window_of_the_newest_rows_that_holds_too_few_matches_gives_way_to_every_match() {
    let Some(url) = database("pool_window") else {
        return;
    };
    let c = cluster().unwrap();
    // 10,000 messages a minute apart, in 50 sessions: `zqeven` in every
    // eighth, `zqold` in 1,250 of the oldest 5,000. Each matches an
    // eighth of the rows: the pool is taken from the GIN index, cut to a
    // window of the newest ~half, which holds `zqeven`'s newest but none
    // of `zqold`'s.
    let s = Scratch::new();
    let project = s.dir.path().join("sessions/--home-u-window--");
    std::fs::create_dir_all(&project).unwrap();
    for f in 0..50 {
        let mut lines = vec![format!(
            r#"{{"type":"session","version":3,"id":"window-{f}","timestamp":"2026-05-01T00:00:00.000Z","cwd":"/home/u/window"}}"#
        )];
        for i in 0..200 {
            let n = f * 200 + i;
            let parent = if i == 0 {
                "null".to_owned()
            } else {
                format!("\"m{}\"", i - 1)
            };
            let mut text = format!("message {n} of the window test");
            if n % 8 == 0 {
                text.push_str(" zqeven");
            }
            if n < 5000 && n % 4 == 1 {
                text.push_str(" zqold");
            }
            let t = 1_777_000_000_000i64 + n as i64 * 60_000;
            let ts = jiff::Timestamp::from_millisecond(t).unwrap();
            lines.push(format!(
                r#"{{"type":"message","id":"m{i}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"{text}","timestamp":0}}}}"#
            ));
        }
        std::fs::write(
            project.join(format!("w{f:02}.jsonl")),
            lines.join("\n") + "\n",
        )
        .unwrap();
    }
    s.build(&[&s.dir.path().join("sessions")], &[]);
    push_ok(&s, &url, "h");
    c.sql("pool_window", "ANALYZE");
    let db = pi_index::team::Db::connect(&url).unwrap();
    for (word, window_enough) in [("zqeven", true), ("zqold", false)] {
        for sort in ["relevance", "newest", "oldest"] {
            let args = ["search", "--json", "-n", "30", "--sort", sort];
            let remote = json_lines(&run(s.cmd().args(args).args(["--db", &url, "--", word])));
            let local = json_lines(&run(s
                .cmd()
                .args(args)
                .arg("--index")
                .arg(s.index())
                .args(["--", word])));
            let key = |hits: &[serde_json::Value]| -> Vec<(String, u64)> {
                hits.iter()
                    .map(|h| {
                        (
                            h["session_id"].as_str().unwrap().to_owned(),
                            h["line"].as_u64().unwrap(),
                        )
                    })
                    .collect()
            };
            assert_eq!(remote.len(), 30, "{word} {sort}");
            if sort != "relevance" {
                assert_eq!(key(&remote), key(&local), "{word} {sort}");
            }
        }
        // The search takes the window's matches, and runs its statement
        // again over every match only when the window holds too few.
        let plan = pi_index::team::search::explain(
            &db,
            word,
            &Default::default(),
            &pi_index::search::query::Now::system(),
            true,
        )
        .unwrap();
        let plans: Vec<&str> = plan
            .split(pi_index::team::search::STATEMENTS_APART)
            .collect();
        assert_eq!(
            plans.len(),
            if window_enough { 1 } else { 2 },
            "{word}: {plan}"
        );
        // The first reads the window (a condition on the time), the second
        // every match (none).
        assert!(plans[0].contains("ts_ms >= '"), "{word}: {plan}");
        if let Some(every) = plans.get(1) {
            assert!(!every.contains("ts_ms >= '"), "{word}: {plan}");
        }
    }
}

/// Sessions planting identifiers of several shapes, among filler.
fn identifier_sessions(s: &Scratch) -> PathBuf {
    let planted = [
        "Call JoinHandle::is_finished before joining",
        "String::from_utf8 returns a Result",
        "HeaderMap::reserve grows the map",
        "a header map in prose",
        "the zqMixedCase token",
    ];
    // Filler, so that no piece is in a quarter of the messages.
    let filler: Vec<String> = (0..40).map(|i| format!("nothing else here {i}")).collect();
    let filler: Vec<&str> = filler.iter().map(String::as_str).collect();
    named_sessions(
        s,
        &[
            ("planted", None, "identifiers", &planted),
            ("filler", None, "filler", &filler),
        ],
    )
}

#[test]
fn identifiers_typed_without_their_separators_are_found_as_locally() {
    let Some(url) = database("identifiers") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = identifier_sessions(&s);
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "h");
    for query in [
        "isfinished",
        "joinhandle::is_finished",
        "JOINHANDLE::ISFINISHED",
        "fromutf8",
        "headermap::reserve",
        "headermap",
        "zqmixedcase",
        "\"header map\"",
    ] {
        let (local, db) = local_and_db(&s, &url, "h", query);
        assert!(!local.is_empty(), "{query}: the local index finds it");
        assert_eq!(as_set(db.clone()), as_set(local), "{query}");
        // The exact form first: `headermap` is the whole of `HeaderMap`,
        // and only a phrase of its pieces in the prose.
        if query == "headermap" {
            assert_eq!(db.len(), 2, "{db:?}");
            assert!(
                db[0]["text"].as_str().unwrap().starts_with("HeaderMap"),
                "{db:?}"
            );
        }
    }
    // The dictionary is what a recount of the rows gives.
    // (Pair lexemes, which hold a space, are no terms.)
    let truth = "SELECT host, term, count(*) AS docs FROM (SELECT m.host, u.lexeme AS term \
         FROM pi_messages m CROSS JOIN LATERAL unnest(m.tsv) u WHERE strpos(u.lexeme, ' ') = 0 \
         UNION ALL SELECT host, '' FROM pi_messages) t GROUP BY host, term";
    let recount = format!(
        "SELECT count(*) FROM (({truth} EXCEPT SELECT host, term, docs FROM pi_terms) UNION ALL \
         (SELECT host, term, docs FROM pi_terms EXCEPT {truth})) x"
    );
    assert_eq!(c.sql("identifiers", &recount), "0");
    assert_eq!(
        c.sql(
            "identifiers",
            "SELECT docs FROM pi_terms WHERE term = 'finished'"
        ),
        "1"
    );
}

#[test]
fn roles_made_before_the_dictionary_are_given_it_by_the_migration() {
    // A cluster of its own: roles are the cluster's, and the module's
    // cluster has `pi_pusher` and `pi_reader` from another test.
    let Some(c) = Cluster::start() else {
        return;
    };
    let url = c.create_db("roles4");
    let s = Scratch::new();
    let dir = identifier_sessions(&s);
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "bob");
    c.sql("roles4", &roles_sql());
    c.sql(
        "roles4",
        "CREATE ROLE alice4 LOGIN IN ROLE pi_pusher; CREATE ROLE carol4 LOGIN IN ROLE pi_reader",
    );
    // The database as schema 3 left it, with the roles made then: no
    // dictionary and no pair words, so nothing granted on them.
    c.sql("roles4", BEFORE_PAIRS);
    c.sql(
        "roles4",
        "DROP TABLE pi_terms; UPDATE pi_index_schema SET version = 3",
    );
    // The owner's next push migrates and gives the roles the tables.
    push_ok(&s, &url, "bob");
    assert_eq!(
        c.sql("roles4", "SELECT version FROM pi_index_schema"),
        pi_index::team::schema::VERSION.to_string()
    );
    let hits = db_search(&s, &c.url_as("carol4", "roles4"), "isfinished");
    assert_eq!(hits.len(), 1, "{hits:?}");
    // The pusher counts its own terms and sees only them.
    let r = push_ok(&s, &c.url_as("alice4", "roles4"), "alice4");
    assert_eq!(r["sessions_new"], 2, "{r}");
    assert_eq!(
        c.sql_as(
            "alice4",
            "roles4",
            "SELECT count(DISTINCT host) FROM pi_terms"
        )
        .unwrap(),
        "1"
    );
    assert!(c
        .sql_as(
            "alice4",
            "roles4",
            "UPDATE pi_terms SET docs = 0 WHERE host = 'bob'"
        )
        .is_ok());
    assert_eq!(
        c.sql(
            "roles4",
            "SELECT count(*) FROM pi_terms WHERE host = 'bob' AND docs = 0"
        ),
        "0"
    );
    let hits = db_search(&s, &c.url_as("carol4", "roles4"), "isfinished");
    assert_eq!(hits.len(), 2, "{hits:?}");
}

/// The statement's plan for `query`, as `search --db` runs it.
fn plan_of(url: &str, query: &str) -> String {
    let db = pi_index::team::Db::connect(url).unwrap();
    pi_index::team::search::explain(
        &db,
        query,
        &Default::default(),
        &pi_index::search::query::Now::system(),
        false,
    )
    .unwrap()
}

#[test]
fn phrases_of_the_team_s_pair_words_ask_for_their_pairs_and_find_what_the_local_index_finds() {
    let Some(url) = database("pairs") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let messages = [
        "error handling in the parser",
        "handling of an error",
        "the error, handling it later",
        "better error handling",
        "error handling error handling",
        "nothing of either",
    ];
    let dir = named_sessions(&s, &[("pairs", None, "pairs", &messages)]);
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "h");
    // The first push chose the pair words: its index's commonest terms
    // (here every term, there being fewer than 128).
    assert_eq!(
        c.sql(
            "pairs",
            "SELECT count(*) FROM pi_pair_words WHERE term IN ('error', 'handling', 'the')"
        ),
        "3"
    );
    // A message holds the pair of every two listed words in a row.
    assert_eq!(
        c.sql(
            "pairs",
            "SELECT string_agg(ord::text, ',' ORDER BY ord) FROM pi_messages \
             WHERE tsv @@ '''error handling'''::tsquery"
        ),
        "1,3,4,5"
    );
    let queries = [
        "\"error handling\"",
        "\"handling error\"",
        "error -\"error handling\"",
        "\"error handling\" OR \"handling of\"",
        "\"the error handling\"",
        "\"the error\"",
    ];
    let same_as_locally = |why: &str| {
        for q in queries {
            let (local, db) = local_and_db(&s, &url, "h", q);
            assert_eq!(as_set(db), as_set(local), "{q}, {why}");
        }
    };
    same_as_locally("with pairs");
    // (`the error, handling it later` too: the comma is no word.)
    assert_eq!(db_search(&s, &url, "\"error handling\"").len(), 4);
    assert_eq!(db_search(&s, &url, "\"handling error\"").len(), 1);
    // The phrase asks the GIN index for its pair.
    c.sql("pairs", "ANALYZE");
    c.sql("pairs", "ALTER DATABASE pairs SET enable_seqscan = off");
    let plan = plan_of(&url, "\"error handling\"");
    assert!(plan.contains("'error handling'"), "{plan}");
    assert!(plan.contains("pi_messages_tsv"), "{plan}");
    // Rows pushed without pairs (as version 4 made them): a search asks
    // for none, and finds the same.
    // The scores with pairs, to compare.
    let scored = |q: &str| -> Vec<(String, u64, f64)> {
        db_search(&s, &url, q)
            .iter()
            .map(|h| {
                (
                    h["session_id"].as_str().unwrap().to_owned(),
                    h["line"].as_u64().unwrap(),
                    h["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let ranked = [
        "error handling",
        "\"error handling\"",
        "the",
        "error OR parser",
    ];
    let with_pairs: Vec<_> = ranked.iter().map(|q| scored(q)).collect();
    c.sql(
        "pairs",
        "UPDATE pi_messages SET tsv = ts_delete(tsv, ARRAY(SELECT u.lexeme \
         FROM unnest(tsv) u WHERE strpos(u.lexeme, ' ') > 0)), rank_len = 0; \
         UPDATE pi_sessions SET pushed_schema = 4",
    );
    let plan = plan_of(&url, "\"error handling\"");
    assert!(!plan.contains("'error handling'"), "{plan}");
    same_as_locally("rows without pairs");
    // Pairs change no score (the length a score is normalized by leaves
    // them out): the same hits in the same order, the same scores (to the
    // last bits of a `real`).
    for (q, before) in ranked.iter().zip(&with_pairs) {
        let now = scored(q);
        assert!(now.len() > 1, "{q}");
        assert_eq!(now.len(), before.len(), "{q}");
        for (a, b) in now.iter().zip(before) {
            assert_eq!((&a.0, a.1), (&b.0, b.1), "{q}: {now:?} {before:?}");
            assert!((a.2 - b.2).abs() <= 1e-6 * a.2.abs(), "{q}: {a:?} {b:?}");
        }
    }
    // The next push replaces them, and pairs are asked for again.
    let r = push_ok(&s, &url, "h");
    assert_eq!(r["sessions_replaced"], 1, "{r}");
    let plan = plan_of(&url, "\"error handling\"");
    assert!(plan.contains("'error handling'"), "{plan}");
    same_as_locally("pushed again");
    assert_eq!(
        dump(c, "pairs"),
        fresh_dump(&s, "pairs_fresh", "h", "pairs")
    );
}

#[test]
fn an_omp_session_is_pushed_with_its_agent_into_a_version_6_database() {
    let Some(url) = database("agents") else {
        return;
    };
    let c = cluster().unwrap();
    let s = Scratch::new();
    let dir = s.dir.path().join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        fixtures().join("branch-abandoned.jsonl"),
        dir.join("branch-abandoned.jsonl"),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    push_ok(&s, &url, "h");
    // The database as version 6 left it: no agent nor usage column. The
    // next push adds them (Pi's on the rows there, and their usage) and
    // pushes Oh My Pi's session with its own.
    c.sql(
        "agents",
        "ALTER TABLE pi_sessions DROP COLUMN agent, DROP COLUMN usage; \
         UPDATE pi_index_schema SET version = 6",
    );
    std::fs::copy(
        fixtures().join("omp-header-title-no-slot.jsonl"),
        dir.join("omp.jsonl"),
    )
    .unwrap();
    s.build(&[&dir], &[]);
    let r = push_ok(&s, &url, "h");
    assert_eq!(r["sessions_new"], 1, "{r}");
    // The session pushed before: its usage alone.
    assert_eq!(r["sessions_usage_added"], 1, "{r}");
    assert_eq!(
        c.sql("agents", "SELECT version FROM pi_index_schema"),
        pi_index::team::schema::VERSION.to_string()
    );
    assert_eq!(
        c.sql(
            "agents",
            "SELECT string_agg(agent || ' ' || session_id, ',' ORDER BY agent) FROM pi_sessions"
        ),
        "omp 0198c0de-7a11-7000-8000-0000000000a4,pi 4f8a2b6c-0d4e-4f8a-ab6c-0d4e8f2a6b0c"
    );
    assert_eq!(
        dump(c, "agents"),
        fresh_dump(&s, "agents_fresh", "h", "agents")
    );
    // Hits say which agent wrote them, in JSON and in words.
    let hits = db_search(&s, &url, "legacy");
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(hits.iter().all(|h| h["agent"] == "omp"), "{hits:?}");
    let out = run(s.cmd().args(["search", "legacy", "--db", &url]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "Oh My Pi  h  /home/u/proj  {}",
            std::fs::canonicalize(dir.join("omp.jsonl"))
                .unwrap()
                .display()
        )),
        "{text}"
    );
    let out = run(s.cmd().args(["sessions", "--json", "--db", &url]));
    let rows = json_lines(&out);
    let agents: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap(),
                r["agent"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        agents.contains(&("0198c0de-7a11-7000-8000-0000000000a4", "omp"))
            && agents.contains(&("4f8a2b6c-0d4e-4f8a-ab6c-0d4e8f2a6b0c", "pi")),
        "{agents:?}"
    );
}

/// `stats --db`: what the database holds, each host's, as one JSON object
/// (the local object's keys where they apply, `database` for `index`) and
/// for people; and `--db` alone reads the URL from
/// `PI_INDEX_DATABASE_URL`, for every read command, whose help names it.
#[test]
fn stats_db_and_db_alone_read_the_team_database() {
    let Some(url) = database("stats_db") else {
        return;
    };
    let hosts = ["alice@laptop", "bob@devbox"];
    let mut scratches = Vec::new();
    for (host, word) in hosts.iter().zip(["zqalpha", "zqbravo"]) {
        let s = Scratch::new();
        let dir = sessions_with(&s, word);
        s.build(&[&dir], &[]);
        push_ok(&s, &url, host);
        scratches.push(s);
    }
    let s = &scratches[0];
    let local: Vec<serde_json::Value> = scratches
        .iter()
        .map(|s| {
            json_lines(&run(s
                .cmd()
                .args(["stats", "--json", "--index"])
                .arg(s.index())))
            .remove(0)
        })
        .collect();
    let out = run(s.cmd().args(["stats", "--json", "--db", &url]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = json_lines(&out).remove(0);
    assert_eq!(stats["database"], url.trim_start_matches("postgres://"));
    let sum = |k: &str| local.iter().map(|l| l[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(stats["sessions"], sum("sessions"));
    assert_eq!(stats["messages"], sum("messages"));
    assert_eq!(
        stats["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["host"].as_str().unwrap())
            .collect::<Vec<_>>(),
        hosts
    );
    for key in ["index", "index_bytes", "top_projects", "copies", "roots"] {
        assert!(stats.get(key).is_none(), "{key}: {stats}");
    }
    // The local object is unchanged: `index` first, no `hosts`.
    let raw = run(s.cmd().args(["stats", "--json", "--index"]).arg(s.index()));
    let raw = String::from_utf8_lossy(&raw.stdout);
    assert!(raw.starts_with("{\"index\":"), "{raw}");
    assert!(!raw.contains("\"hosts\""), "{raw}");
    let out = run(s.cmd().args(["stats", "--db", &url]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("database   "), "{text}");
    for line in ["hosts      2", "sessions   4", "per host"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    assert!(
        text.contains("2 sessions ") && text.contains("bob@devbox"),
        "{text}"
    );

    // `--db` alone: the URL from the environment.
    for args in [
        &["search", "--json", "--db", "--", "zqalpha"][..],
        &["sessions", "--json", "--db"],
        &[
            "show",
            "same-id-on-every-host",
            "--format",
            "json",
            "--host",
            "bob@devbox",
            "--db",
        ],
        &["stats", "--json", "--db"],
    ] {
        let out = run(s.cmd().env("PI_INDEX_DATABASE_URL", &url).args(args));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let first = json_lines(&out).remove(0);
        assert!(
            first.get("host").is_some() || first.get("database").is_some(),
            "{args:?}: {first}"
        );
    }
    let out = run(s
        .cmd()
        .env_remove("PI_INDEX_DATABASE_URL")
        .args(["search", "x", "--db"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("PI_INDEX_DATABASE_URL"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for cmd in [
        "search", "sessions", "show", "stats", "usage", "serve", "mcp", "pick",
    ] {
        let help = run(s.cmd().args([cmd, "--help"]));
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("--db [<URL>]"),
            "{cmd} --help names --db"
        );
    }
}
