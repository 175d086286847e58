//! `pi-index push` and `--db`, against a real PostgreSQL server: a private
//! cluster (`initdb`, `pg_ctl`) on a loopback port, shared by this
//! module's tests (one database each), plus private clusters for the
//! tests that stop a server or need a replica.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::util::incremental::{append, assistant, setup, user};
use crate::util::pg::{dump, eventually, push, push_ok, Cluster};
use crate::util::{fixtures, json_lines, run, Scratch};

/// The module's cluster, started once; `None` without PostgreSQL (said
/// once; a failure under CI).
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
fn sessions_with(s: &Scratch, word: &str) -> PathBuf {
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
    // The team database keeps no fork lineage yet (README, For a team):
    // the local rows' `parent` and `forks` are the one difference.
    let local_rows: Vec<_> = local_rows
        .iter()
        .map(|r| without(r, &["parent", "forks"]))
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
    // The database keeps no fork lineage yet: no parent, no forks.
    let mut want: Vec<String> = local[0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| !matches!(k.as_str(), "parent" | "forks"))
        .cloned()
        .collect();
    want.push("host".into());
    keys.sort();
    want.sort();
    assert_eq!(keys, want);
    assert_eq!(found[0]["session_id"], local[0]["session_id"]);

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
/// uninterrupted, from-scratch push gives.
pub fn fresh_dump(s: &Scratch, name: &str, host: &str) -> String {
    let c = cluster().unwrap();
    let url = c.create_db(name);
    push_ok(s, &url, host);
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
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_1", "h"));
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
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_2", "h"));
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
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_edit", "h"));
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
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_3", "h"));
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
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_4", "h"));

    // A delete: its rows gone.
    std::fs::remove_file(&moved).unwrap();
    t.build(&[]);
    let r = push_ok(&t.s, &url, "h");
    assert_eq!(r["sessions_deleted"], 1, "{r}");
    assert_eq!(dump(c, "changes"), fresh_dump(&t.s, "changes_5", "h"));
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
    // The planner uses the GIN index on the messages' tsvector.
    c.sql("long_phrase", "ANALYZE");
    let db = pi_index::team::Db::connect(&url).unwrap();
    let plan = pi_index::team::search::explain(
        &db,
        "w123",
        &Default::default(),
        &pi_index::search::query::Now::system(),
    )
    .unwrap();
    assert!(plan.contains("pi_messages_tsv"), "{plan}");
}

/// The README's roles, as `scripts/team/roles.sql` holds them.
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
    // She sees and deletes only her own rows.
    assert_eq!(
        c.sql_as(
            "alice",
            "roles",
            "SELECT count(DISTINCT host) FROM pi_messages"
        )
        .unwrap(),
        "1"
    );
    c.sql_as(
        "alice",
        "roles",
        "DELETE FROM pi_messages WHERE host = 'bob'",
    )
    .unwrap();
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
    // The reader searches everything and writes nothing.
    let hits = db_search(&s, &c.url_as("carol", "roles"), "zqroles");
    assert_eq!(hits.len(), 4);
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
    let Some(cert) = c.enable_tls() else {
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
    let cert = cert.to_string_lossy();
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
    for (url, why) in [
        (
            base(
                "127.0.0.1",
                &format!("sslmode=verify-full&sslrootcert={cert}"),
            ),
            "host name",
        ),
        (
            base("localhost", "sslmode=verify-full"),
            "no root certificate",
        ),
    ] {
        let out = push_with(&url, &[("PGPASSWORD", "sekret-pw")]);
        assert_eq!(out.status.code(), Some(2), "{why}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot connect to the database at pw@"),
            "{why}: {err}"
        );
    }
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
