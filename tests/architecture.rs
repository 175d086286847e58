//! The rooms point one way: what each source file imports, read from its
//! `crate::`, `super::` and `self::` paths, checked against the layout.
//!
//! - the write side and the format (`index/`, `pi/`, `source/`) never
//!   import the read side (`search/`);
//! - no two files import each other (a module's `mod.rs`, which declares
//!   and re-exports its children, is left out of this: it is the room's
//!   door, not a room);
//! - the front ends over the library (`pick/`, `mcp/`, and `serve/`,
//!   `team/` where they exist) never import one another.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/pi/chunk.rs` is `["pi", "chunk"]`,
/// `src/pi/mod.rs` is `["pi"]`, `src/lib.rs` is `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The file a module path lands in: the longest prefix that is a file.
fn file_of(path: &[String]) -> Option<PathBuf> {
    for n in (1..=path.len()).rev() {
        let base = path[..n].iter().fold(src(), |p, s| p.join(s));
        let file = base.with_extension("rs");
        if file.is_file() {
            return Some(file);
        }
        let m = base.join("mod.rs");
        if m.is_file() {
            return Some(m);
        }
    }
    None
}

/// Code without comments (doc links like [`super::view`] are not imports).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                ""
            } else {
                l.split(" //").next().unwrap()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Identifier characters.
fn ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths named at `at` (just after a `::`): one path, or each path of
/// a `{...}` group, as segments.
fn paths_at(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut segs = prefix;
    loop {
        if code.get(at) == Some(&b'{') {
            // Items of the group, split at top-level commas.
            let mut depth = 0;
            let mut start = at + 1;
            let mut i = at + 1;
            while i < code.len() {
                match code[i] {
                    b'{' => depth += 1,
                    b'}' if depth == 0 => {
                        group_item(code, start, i, &segs, out);
                        return;
                    }
                    b'}' => depth -= 1,
                    b',' if depth == 0 => {
                        group_item(code, start, i, &segs, out);
                        start = i + 1;
                    }
                    _ => {}
                }
                i += 1;
            }
            return;
        }
        let s = at;
        while at < code.len() && ident(code[at]) {
            at += 1;
        }
        if s == at {
            out.push(segs);
            return;
        }
        segs.push(String::from_utf8_lossy(&code[s..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            out.push(segs);
            return;
        }
    }
}

fn group_item(code: &[u8], start: usize, end: usize, segs: &[String], out: &mut Vec<Vec<String>>) {
    let mut s = start;
    while s < end && code[s].is_ascii_whitespace() {
        s += 1;
    }
    if s < end && code[s..end].iter().any(|&b| ident(b) || b == b'{') {
        paths_at(code, s, segs.to_vec(), out);
    }
}

/// The module paths `file` names through `crate::`, `super::`, `self::`.
fn imports(file: &Path) -> Vec<Vec<String>> {
    let is_mod = file
        .file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs");
    imports_of(
        &std::fs::read_to_string(file).unwrap(),
        &module_of(file),
        is_mod,
    )
}

/// The module paths `text`, the source of module `here` (a `mod.rs` if
/// `is_mod`), names.
fn imports_of(text: &str, here: &[String], is_mod: bool) -> Vec<Vec<String>> {
    let text = code(text);
    let bytes = text.as_bytes();
    let here = here.to_vec();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let before_ok = i == 0 || !ident(bytes[i - 1]) && bytes[i - 1] != b':';
        let mut found = None;
        for kw in ["crate::", "super::", "self::"] {
            if before_ok && bytes[i..].starts_with(kw.as_bytes()) {
                found = Some(kw);
            }
        }
        let Some(kw) = found else {
            i += 1;
            continue;
        };
        let mut base: Vec<String> = match kw {
            "crate::" => Vec::new(),
            // The module of a mod.rs is its directory; its parent is one up.
            "self::" => here.clone(),
            _ => {
                let mut b = here.clone();
                if !is_mod || !here.is_empty() {
                    b.pop();
                }
                b
            }
        };
        let mut at = i + kw.len();
        // super::super::...
        while bytes[at..].starts_with(b"super::") {
            base.pop();
            at += "super::".len();
        }
        paths_at(bytes, at, base, &mut out);
        i = at;
    }
    out
}

/// Every file's imported files (itself, lib.rs and main.rs left out).
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut g = BTreeMap::new();
    for f in &files {
        let mut to = BTreeSet::new();
        for path in imports(f) {
            if let Some(t) = file_of(&path) {
                if &t != f {
                    to.insert(t);
                }
            }
        }
        g.insert(f.clone(), to);
    }
    g
}

fn rel(p: &Path) -> String {
    p.strip_prefix(src()).unwrap().display().to_string()
}

fn room(p: &Path) -> String {
    module_of(p).first().cloned().unwrap_or_default()
}

#[test]
fn the_import_reader_reads_groups_nesting_and_parents() {
    let text = "//! [`super::view`] is a doc link, not an import\n\
                use super::{chunk::{Link, NO_LINK}, extract};\n\
                use crate::search::Hit; // use crate::pick::App\n\
                fn f() { let _ = super::super::index::schema::session_key(\"\"); }\n";
    let here = ["pi".to_owned(), "parsed".to_owned()];
    let got: Vec<String> = imports_of(text, &here, false)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        got,
        [
            "pi::chunk::Link",
            "pi::chunk::NO_LINK",
            "pi::extract",
            "search::Hit",
            "index::schema::session_key"
        ]
    );
    // In a mod.rs, `super` is the parent of its directory.
    let got = imports_of("use super::Kinds;", &["pi".to_owned()], true);
    assert_eq!(got, [vec!["Kinds".to_owned()]]);
}

#[test]
fn the_import_reader_sees_what_a_file_imports() {
    // The checks below are only as good as this reading.
    let chunk = src().join("pi/chunk.rs");
    let names: BTreeSet<String> = graph()[&chunk].iter().map(|p| rel(p)).collect();
    for want in [
        "pi/extract.rs",
        "pi/parsed.rs",
        "pi/entry.rs",
        "source/mod.rs",
    ] {
        assert!(names.contains(want), "{want} not in {names:?}");
    }
    let view = src().join("pick/view.rs");
    let names: BTreeSet<String> = graph()[&view].iter().map(|p| rel(p)).collect();
    assert!(names.contains("pick/app.rs"), "{names:?}");
}

#[test]
fn the_write_side_and_the_format_never_import_the_read_side() {
    let mut wrong = Vec::new();
    for (from, to) in graph() {
        if ["index", "pi", "source"].contains(&room(&from).as_str()) {
            for t in to.iter().filter(|t| room(t) == "search") {
                wrong.push(format!("{} imports {}", rel(&from), rel(t)));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn no_two_files_import_each_other() {
    let g = graph();
    let parent_door = |a: &Path, b: &Path| {
        // A mod.rs and the files of its own directory.
        let door = |m: &Path, f: &Path| {
            m.file_name().is_some_and(|n| n == "mod.rs") && f.starts_with(m.parent().unwrap())
        };
        door(a, b) || door(b, a)
    };
    let mut pairs = Vec::new();
    for (a, to) in &g {
        for b in to {
            if a < b && g.get(b).is_some_and(|back| back.contains(a)) && !parent_door(a, b) {
                pairs.push(format!("{} <-> {}", rel(a), rel(b)));
            }
        }
    }
    assert!(pairs.is_empty(), "{pairs:#?}");
}

#[test]
fn front_ends_never_import_one_another() {
    let fronts = ["pick", "mcp", "serve", "team"];
    // The one way allowed: the web view reads the team database with
    // `serve --db`, through its own module (serve/team.rs), as the
    // command line's `--db` does; the team database knows nothing of the
    // web view.
    let allowed = |from: &Path, to: &str| rel(from) == "serve/team.rs" && to == "team";
    let mut wrong = Vec::new();
    let mut seen_allowed = false;
    for (from, to) in graph() {
        let r = room(&from);
        if !fronts.contains(&r.as_str()) {
            continue;
        }
        for t in &to {
            let tr = room(t);
            if tr != r && fronts.contains(&tr.as_str()) {
                if allowed(&from, &tr) {
                    seen_allowed = true;
                } else {
                    wrong.push(format!("{} imports {}", rel(&from), rel(t)));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The exception names a real import (else it is stale: remove it).
    assert!(seen_allowed, "serve/team.rs no longer imports team");
}
