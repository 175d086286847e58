//! The rooms point one way: what each source file imports, read from its
//! paths, checked against the layout.
//!
//! - no import cycle between the files of `src`, of any length: a file
//!   that imports another never reaches itself through the files that one
//!   imports. A module's `mod.rs` that only declares its children and
//!   re-exports their items is the room's door, not a room: an import
//!   through it is an import of the file the item lives in. A `mod.rs`
//!   that holds logic is a file like any other;
//! - the write side and the format (`index/`, `pi/`, `source/`) and the
//!   build (`pipeline/`) never import the read side (`search/`);
//! - the front ends (`pick/`, `mcp/`, `serve/`, and the command line's
//!   read commands) never import one another, and reach the team
//!   database only through the read interface (`read/`): nothing of
//!   `team/` but there (and `push`, which writes it).

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

/// Whether `file` is a module's own file (`mod.rs`, `lib.rs`, `main.rs`):
/// `super` in it is one up from its directory, and bare paths in it may
/// name its children.
fn is_mod_file(file: &Path) -> bool {
    file.file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
}

/// The file a module path names, with what is left of the path: the
/// longest prefix that is a file.
fn file_of(path: &[String]) -> Option<(PathBuf, usize)> {
    for n in (1..=path.len()).rev() {
        let base = path[..n].iter().fold(src(), |p, s| p.join(s));
        let file = base.with_extension("rs");
        if file.is_file() {
            return Some((file, n));
        }
        let m = base.join("mod.rs");
        if m.is_file() {
            return Some((m, n));
        }
    }
    None
}

/// Code without comments (doc links like [`super::view`] are not
/// imports) and without its test modules (`#[cfg(test)] mod ... { }`,
/// whose `super` is the file itself).
fn code(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") {
                ""
            } else {
                l.split(" //").next().unwrap()
            }
        })
        .collect();
    let joined = lines.join("\n");
    // Cut each module under a `#[cfg(...)]` that names `test`, braces
    // matched.
    let mut out = String::with_capacity(joined.len());
    let mut rest = joined.as_str();
    while let Some(at) = rest.find("#[cfg(") {
        let close = rest[at..].find(")]").map_or(rest.len(), |c| at + c + 2);
        let attr = &rest[at..close];
        let after = &rest[close..];
        let t = after.trim_start();
        let is_mod = t.starts_with("mod ") || t.starts_with("pub mod ");
        let open = after.find('{');
        let semi = after.find(';');
        let tested = attr
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == "test");
        match (tested && is_mod, open) {
            (true, Some(o)) if semi.is_none_or(|s| s > o) => {
                out.push_str(&rest[..at]);
                let bytes = after.as_bytes();
                let mut depth = 0usize;
                let mut end = bytes.len();
                for (i, &b) in bytes.iter().enumerate().skip(o) {
                    match b {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end.min(after.len())..];
            }
            _ => {
                out.push_str(&rest[..close]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Identifier characters.
fn ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths named at `at` (just after a `::`, or at a bare path's
/// first segment): one path, or each path of a `{...}` group, as
/// segments, each with the name it is brought in as (`as` honoured; `*`
/// for a glob).
fn paths_at(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
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
        if code.get(at) == Some(&b'*') {
            out.push((segs, "*".into()));
            return;
        }
        let s = at;
        while at < code.len() && ident(code[at]) {
            at += 1;
        }
        if s == at {
            let name = segs.last().cloned().unwrap_or_default();
            out.push((segs, name));
            return;
        }
        segs.push(String::from_utf8_lossy(&code[s..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
            continue;
        }
        // `x as y`
        let mut j = at;
        while j < code.len() && code[j].is_ascii_whitespace() {
            j += 1;
        }
        let name = if code[j..].starts_with(b"as ") {
            let mut k = j + 3;
            while k < code.len() && code[k].is_ascii_whitespace() {
                k += 1;
            }
            let e = (k..code.len())
                .find(|&i| !ident(code[i]))
                .unwrap_or(code.len());
            String::from_utf8_lossy(&code[k..e]).into_owned()
        } else {
            segs.last().cloned().unwrap_or_default()
        };
        out.push((segs, name));
        return;
    }
}

fn group_item(
    code: &[u8],
    start: usize,
    end: usize,
    segs: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut s = start;
    while s < end && code[s].is_ascii_whitespace() {
        s += 1;
    }
    if s < end
        && code[s..end]
            .iter()
            .any(|&b| ident(b) || b == b'{' || b == b'*')
    {
        if code[s..].starts_with(b"self") && !ident(code[s + 4]) {
            // `{self, ...}`: the module itself.
            out.push((segs.to_vec(), segs.last().cloned().unwrap_or_default()));
            return;
        }
        paths_at(code, s, segs.to_vec(), out);
    }
}

/// One file read: where it is, what it imports, what it re-exports.
struct Source {
    file: PathBuf,
    /// The paths it names (absolute module paths).
    imports: Vec<Vec<String>>,
    /// What it brings in under a name (`use`, `pub use`): name to path.
    names: BTreeMap<String, Vec<String>>,
    /// Paths it brings in whole (`use x::*`).
    globs: Vec<Vec<String>>,
    /// Whether it holds logic (an item other than a module, a `use` or an
    /// attribute). A `mod.rs` that does not is its room's door.
    logic: bool,
}

impl Source {
    fn door(&self) -> bool {
        is_mod_file(&self.file) && !self.logic
    }
}

/// Whether `code` declares an item other than modules and `use`s.
fn holds_logic(code: &str) -> bool {
    const ITEMS: [&str; 12] = [
        "fn ",
        "struct ",
        "enum ",
        "impl ",
        "impl<",
        "trait ",
        "const ",
        "static ",
        "type ",
        "macro_rules!",
        "union ",
        "extern ",
    ];
    code.lines().any(|l| {
        let mut t = l.trim_start();
        for q in [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "async ",
            "unsafe ",
            "const fn ",
        ] {
            t = t.strip_prefix(q).unwrap_or(t);
        }
        if l.trim_start().contains("const fn ") {
            return true;
        }
        ITEMS.iter().any(|i| t.starts_with(i))
    })
}

/// The child modules `code` (a module's own file) declares.
fn children(code: &str) -> BTreeSet<String> {
    code.lines()
        .filter_map(|l| {
            let mut t = l.trim_start();
            for vis in ["pub(crate) ", "pub(super) ", "pub "] {
                t = t.strip_prefix(vis).unwrap_or(t);
            }
            let name = t.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_owned())
        })
        .collect()
}

/// Read `file`.
fn read(file: &Path) -> Source {
    let text = std::fs::read_to_string(file).unwrap();
    read_text(&text, file.to_owned(), module_of(file), is_mod_file(file))
}

/// Read `text`, the source of module `here` (a module's own file if
/// `is_mod`).
fn read_text(text: &str, file: PathBuf, here: Vec<String>, is_mod: bool) -> Source {
    let code = code(text);
    let bytes = code.as_bytes();
    let kids = if is_mod {
        children(&code)
    } else {
        BTreeSet::new()
    };
    // Each path found: where, and the paths it names with their names.
    type Named = (Vec<String>, String);
    let mut found: Vec<(usize, Vec<Named>)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let before_ok = i == 0 || !ident(bytes[i - 1]) && bytes[i - 1] != b':';
        if !before_ok || !ident(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        while end < bytes.len() && ident(bytes[end]) {
            end += 1;
        }
        let word = &code[start..end];
        let pathlike = bytes[end..].starts_with(b"::");
        let (base, at): (Option<Vec<String>>, usize) = match word {
            "crate" | "pi_index" if pathlike => (Some(Vec::new()), end + 2),
            "self" if pathlike => (Some(here.clone()), end + 2),
            "super" if pathlike => {
                let mut b = here.clone();
                if !is_mod || !here.is_empty() {
                    b.pop();
                }
                let mut at = end + 2;
                // super::super::...
                while bytes[at..].starts_with(b"super::") {
                    b.pop();
                    at += "super::".len();
                }
                (Some(b), at)
            }
            // A child of a module's own file, by its bare name.
            w if pathlike && kids.contains(w) => (Some(here.clone()), start),
            _ => (None, end),
        };
        match base {
            Some(base) => {
                let mut out = Vec::new();
                paths_at(bytes, at, base, &mut out);
                found.push((start, out));
                i = at.max(end);
            }
            None => i = end,
        }
    }
    // What `use` statements bring in by name: a path found right after a
    // `use` (or `pub use`) keyword.
    let mut names = BTreeMap::new();
    let mut globs = Vec::new();
    let mut imports = Vec::new();
    for (start, paths) in found {
        let head = code[..start].trim_end();
        let used = head.ends_with("use") && {
            let h = head.as_bytes();
            h.len() == 3 || !ident(h[h.len() - 4])
        };
        for (path, name) in paths {
            if used {
                if name == "*" {
                    globs.push(path.clone());
                } else {
                    names.insert(name, path.clone());
                }
            }
            imports.push(path);
        }
    }
    Source {
        file,
        imports,
        names,
        globs,
        logic: holds_logic(&code),
    }
}

/// Every file of `src`, read.
fn sources() -> BTreeMap<PathBuf, Source> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.into_iter().map(|f| (f.clone(), read(&f))).collect()
}

/// The file `path` names: through doors to the file the item lives in;
/// `None` for a room's door itself, or outside `src`.
fn resolve(all: &BTreeMap<PathBuf, Source>, path: &[String], depth: usize) -> Option<PathBuf> {
    if depth > 16 {
        return None;
    }
    let (file, n) = file_of(path)?;
    let s = &all[&file];
    if !s.door() {
        return Some(file);
    }
    let rest = &path[n..];
    let name = rest.first()?;
    if let Some(target) = s.names.get(name) {
        let mut p = target.clone();
        p.extend_from_slice(&rest[1..]);
        return resolve(all, &p, depth + 1);
    }
    // A child module of the door named by its path (`search::hits`) is
    // found by `file_of` above; an item of a glob is looked for there.
    for g in &s.globs {
        let mut p = g.clone();
        p.extend_from_slice(rest);
        if let Some(f) = resolve(all, &p, depth + 1) {
            return Some(f);
        }
    }
    None
}

/// Every file's imported files (itself left out).
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let all = sources();
    let mut g = BTreeMap::new();
    for (f, s) in &all {
        if s.door() {
            continue;
        }
        let mut to = BTreeSet::new();
        for path in &s.imports {
            if let Some(t) = resolve(&all, path, 0) {
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

/// The strongly connected components of `g` with more than one file
/// (Tarjan), each as one of its cycles.
fn cycles(g: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct T<'a> {
        g: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        next: usize,
        out: Vec<Vec<PathBuf>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                if !self.g.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on.remove(w);
                    scc.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    self.out.push(self.cycle_in(&scc));
                }
            }
        }

        /// One cycle through the first file of `scc`, by a walk inside it.
        fn cycle_in(&self, scc: &[PathBuf]) -> Vec<PathBuf> {
            let inside: BTreeSet<&PathBuf> = scc.iter().collect();
            let start = scc.iter().min().unwrap();
            // Breadth first from start back to start.
            let mut prev: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            while let Some(v) = queue.pop_front() {
                for w in &self.g[v] {
                    if !inside.contains(w) {
                        continue;
                    }
                    if w == start {
                        let mut path = vec![v.clone()];
                        let mut at = v;
                        while at != start {
                            at = prev[at];
                            path.push(at.clone());
                        }
                        path.reverse();
                        return path;
                    }
                    if !prev.contains_key(w) && w != start {
                        prev.insert(w, v);
                        queue.push_back(w);
                    }
                }
            }
            scc.to_vec()
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn the_import_reader_reads_groups_nesting_parents_and_aliases() {
    let text = "//! [`super::view`] is a doc link, not an import\n\
                use super::{chunk::{Link, NO_LINK}, extract};\n\
                use crate::search::Hit; // use crate::pick::App\n\
                pub use crate::live as state;\n\
                fn f() { let _ = super::super::index::schema::session_key(\"\"); }\n\
                #[cfg(test)]\nmod tests { use super::*; use crate::serve::App; }\n";
    let here = vec!["pi".to_owned(), "parsed".to_owned()];
    let s = read_text(text, PathBuf::new(), here, false);
    let got: Vec<String> = s.imports.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        [
            "pi::chunk::Link",
            "pi::chunk::NO_LINK",
            "pi::extract",
            "search::Hit",
            "live",
            "index::schema::session_key"
        ]
    );
    assert_eq!(s.names["state"], ["live"]);
    assert_eq!(s.names["NO_LINK"], ["pi", "chunk", "NO_LINK"]);
    assert!(s.logic);
    // In a mod.rs, `super` is the parent of its directory, and a child is
    // named by its bare name; one without items is a door.
    let text = "mod hits;\npub use hits::{Hit, SearchError as Failed};\nuse super::Kinds;\n";
    let s = read_text(text, PathBuf::new(), vec!["search".to_owned()], true);
    let got: Vec<String> = s.imports.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        got,
        ["search::hits::Hit", "search::hits::SearchError", "Kinds"]
    );
    assert_eq!(s.names["Failed"], ["search", "hits", "SearchError"]);
    assert!(!s.logic);
    assert!(read_text("pub struct X;", PathBuf::new(), vec![], true).logic);
    assert!(read_text("impl<T> X for T {}", PathBuf::new(), vec![], true).logic);
}

#[test]
fn the_import_reader_sees_what_a_file_imports() {
    // The checks below are only as good as this reading.
    let g = graph();
    let names =
        |f: &str| -> BTreeSet<String> { g[&src().join(f)].iter().map(|p| rel(p)).collect() };
    let chunk = names("pi/chunk.rs");
    for want in [
        "pi/extract.rs",
        "pi/parsed.rs",
        "pi/entry.rs",
        "source/mod.rs",
    ] {
        assert!(chunk.contains(want), "{want} not in {chunk:?}");
    }
    assert!(names("pick/view.rs").contains("pick/app.rs"));
    // Through a door: `crate::search::SearchRequest` is the file it
    // lives in, not the door.
    let doors: Vec<String> = sources()
        .values()
        .filter(|s| s.door())
        .map(|s| rel(&s.file))
        .collect();
    assert!(doors.contains(&"search/mod.rs".to_owned()), "{doors:?}");
    assert!(!g.values().flatten().any(|t| rel(t) == "search/mod.rs"));
}

#[test]
fn no_files_import_each_other_through_any_number_of_others() {
    let found: Vec<String> = cycles(&graph())
        .iter()
        .map(|c| {
            let mut names: Vec<String> = c.iter().map(|p| rel(p)).collect();
            names.push(names[0].clone());
            names.join(" -> ")
        })
        .collect();
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_cycle_finder_finds_long_cycles() {
    let p = |s: &str| PathBuf::from(s);
    let mut g: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (a, b) in [
        ("a", "b"),
        ("b", "c"),
        ("c", "d"),
        ("d", "a"),
        ("d", "e"),
        ("e", "f"),
    ] {
        g.entry(p(a)).or_default().insert(p(b));
        g.entry(p(b)).or_default();
    }
    assert_eq!(cycles(&g), vec![vec![p("a"), p("b"), p("c"), p("d")]]);
    g.get_mut(&p("d")).unwrap().remove(&p("a"));
    assert!(cycles(&g).is_empty());
}

#[test]
fn the_write_side_the_format_and_the_build_never_import_the_read_side() {
    let mut wrong = Vec::new();
    for (from, to) in graph() {
        if ["index", "pi", "source", "pipeline"].contains(&room(&from).as_str()) {
            for t in to.iter().filter(|t| room(t) == "search") {
                wrong.push(format!("{} imports {}", rel(&from), rel(t)));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn front_ends_never_import_one_another_nor_the_team_database_but_through_the_read_interface() {
    let fronts = ["pick", "mcp", "serve"];
    let mut wrong = Vec::new();
    for (from, to) in graph() {
        let r = room(&from);
        // The command line's read commands are front ends too; `push`
        // writes the team database.
        let cli_reads = r == "cli" && rel(&from) != "cli/push.rs";
        if !fronts.contains(&r.as_str()) && !cli_reads {
            continue;
        }
        for t in &to {
            let tr = room(t);
            let other_front = tr != r && fronts.contains(&tr.as_str()) && r != "cli";
            if other_front || tr == "team" {
                wrong.push(format!("{} imports {}", rel(&from), rel(t)));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
