//! The documentation kept true: README.md and `docs/*.md`.
//!
//! - Every relative link of the repository's markdown files resolves: to
//!   a file or directory, and an anchor (`#...`) to a heading of the
//!   markdown file it names (GitHub's slugs).
//! - Every fenced `sh` block (`bash`, `shell` too) of README.md and
//!   `docs/*.md` runs and succeeds, in order, page by page, against the
//!   binary under test, in a scratch directory whose HOME holds
//!   `~/.pi/agent/sessions` as a copy of the bundled fixtures
//!   (`fixtures/sessions`), so a block never reads or writes real
//!   sessions. The block runs as `bash` with `set -eo pipefail`, in a
//!   directory where `fixtures/`, `scripts/` and `integrations/` are the
//!   repository's; `pi-index` is first on PATH, `cargo run --release --`
//!   (how the README runs it without installing) is read as `pi-index`,
//!   and `/tmp/` is the scratch directory's own. Only a block fenced as
//!   ```` ```sh no-run ```` is skipped (and listed): one that needs the
//!   network, PostgreSQL, a real Pi, a browser or a terminal. So a new
//!   `sh` block is run unless it says it cannot be.
//! - README.md stays under 160 lines, links every page of `docs/`, its
//!   test command is the one `.ci/run` runs, the summary it shows for
//!   the fixtures is the one the build prints (but the time), and its
//!   headline performance rows are rows of the full table of
//!   `docs/performance.md`, verbatim.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// README.md, then `docs/*.md` in name order: the pages whose `sh`
/// blocks are run.
fn doc_pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut pages = vec![root().join("README.md")];
    pages.extend(docs);
    pages
}

/// Every markdown file of the repository, outside build output, hidden
/// directories and installed packages.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(name.starts_with('.') || name == "target" || name == "node_modules") {
                    walk(&p, out);
                }
            } else if name.ends_with(".md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

// ---- markdown, as much of it as the checks need ----------------------------

/// A fenced code block: where it starts (1-based line of its opening
/// fence), its info string's words, and its text.
#[derive(Debug)]
struct Block {
    line: usize,
    info: Vec<String>,
    text: String,
}

impl Block {
    fn is_shell(&self) -> bool {
        matches!(
            self.info.first().map(String::as_str),
            Some("sh" | "bash" | "shell")
        )
    }
    fn no_run(&self) -> bool {
        self.info.iter().any(|w| w == "no-run")
    }
}

/// A fence being read: its character and length, its indent, and the
/// block so far.
struct Open {
    fence: char,
    len: usize,
    indent: usize,
    block: Block,
    lines: Vec<String>,
}

/// The fenced code blocks of a markdown text, and the text with every
/// line inside a fence (fences included) blanked, line numbers kept.
fn split_fences(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<Open> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let run = |c: char| trimmed.chars().take_while(|&x| x == c).count();
        match &mut open {
            None => {
                let fence = if run('`') >= 3 { '`' } else { '~' };
                let len = run(fence);
                if len >= 3 {
                    let info = trimmed[len..]
                        .split_whitespace()
                        .map(str::to_owned)
                        .collect();
                    open = Some(Open {
                        fence,
                        len,
                        indent,
                        block: Block {
                            line: i + 1,
                            info,
                            text: String::new(),
                        },
                        lines: Vec::new(),
                    });
                } else {
                    prose.push_str(line);
                }
            }
            Some(o) => {
                if run(o.fence) >= o.len && trimmed.trim_end().chars().all(|x| x == o.fence) {
                    let mut o = open.take().unwrap();
                    o.block.text = o.lines.join("\n") + "\n";
                    blocks.push(o.block);
                } else {
                    // A fence inside a list item is indented: so are its lines.
                    o.lines.push(line[indent.min(o.indent)..].to_owned());
                }
            }
        }
        prose.push('\n');
    }
    (blocks, prose)
}

/// The text with its inline code spans blanked (a run of n backticks to
/// the next run of exactly n), line breaks kept.
fn blank_code_spans(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = b.clone();
    let run = |at: usize| b[at..].iter().take_while(|&&c| c == '`').count();
    let mut i = 0;
    while i < b.len() {
        if b[i] != '`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut close = None;
        while j < b.len() {
            if b[j] == '`' {
                let m = run(j);
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for c in &mut out[i..j + n] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = j + n;
            }
            None => i += n,
        }
    }
    out.into_iter().collect()
}

/// The link targets of a markdown text, with their lines: `[text](target)`,
/// `![alt](target)`, `[label]: target`, and HTML `href`/`src`, outside
/// code.
fn links(text: &str) -> Vec<(usize, String)> {
    let (_, prose) = split_fences(text);
    let prose = blank_code_spans(&prose);
    let mut out = Vec::new();
    for (i, line) in prose.lines().enumerate() {
        let n = i + 1;
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            // The target ends at the parenthesis that closes this one.
            let mut depth = 0;
            let mut end = after.len();
            for (k, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = k;
                        break;
                    }
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            let mut target = after[..end].trim();
            // A title after the target: [x](path "title")
            if let Some(sp) = target.find(char::is_whitespace) {
                target = &target[..sp];
            }
            let target = target.trim_start_matches('<').trim_end_matches('>');
            out.push((n, target.to_owned()));
            rest = &after[end.min(after.len())..];
        }
        let t = line.trim_start();
        if let Some(def) = t.strip_prefix('[') {
            if let Some(close) = def.find("]:").filter(|&c| def.find(']') == Some(c)) {
                let target = def[close + 2..].split_whitespace().next().unwrap_or("");
                out.push((n, target.to_owned()));
            }
        }
        for attr in ["href=\"", "src=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.push((n, after[..end].to_owned()));
                rest = &after[end..];
            }
        }
    }
    out
}

/// GitHub's anchor for a heading's text: lower case, the inline markup
/// and every character but letters, digits, spaces, `-` and `_` dropped,
/// spaces made `-`.
fn slug(heading: &str) -> String {
    // [text](url) reads as text.
    let mut text = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        text.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        rest = after.find(')').map_or("", |e| &after[e + 1..]);
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a markdown text has: its headings' slugs (a repeated one
/// as `-1`, `-2`, …, as GitHub numbers them) and HTML `id`/`name`s.
pub(crate) fn anchors(text: &str) -> Vec<String> {
    let (_, prose) = split_fences(text);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for line in prose.lines() {
        let t = line.trim_start();
        let hashes = t.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            let s = slug(t[hashes..].trim().trim_end_matches('#'));
            let k = seen.entry(s.clone()).or_insert(0);
            out.push(if *k == 0 {
                s.clone()
            } else {
                format!("{s}-{k}")
            });
            *k += 1;
        }
        for attr in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let after = &rest[at + attr.len()..];
                let end = after.find('"').unwrap_or(after.len());
                out.push(after[..end].to_owned());
                rest = &after[end..];
            }
        }
    }
    out
}

/// What is wrong with the relative links of the markdown file `file` of
/// the repository at `top`: one line per link that does not resolve.
fn broken_links(file: &Path, top: &Path) -> Vec<String> {
    let text = read(file);
    let dir = file.parent().unwrap();
    let mut bad = Vec::new();
    for (line, target) in links(&text) {
        let at = format!(
            "{}:{line}: ({target})",
            file.strip_prefix(top).unwrap_or(file).display()
        );
        if target.is_empty() {
            bad.push(format!("{at}: an empty link"));
            continue;
        }
        let scheme = target.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        });
        if scheme || target.starts_with("//") {
            continue; // http:, https:, mailto:, …: not a file of this repository
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let dest = if path.is_empty() {
            file.to_path_buf()
        } else if path.starts_with('/') {
            bad.push(format!(
                "{at}: an absolute path (GitHub reads it from the site's root)"
            ));
            continue;
        } else {
            dir.join(path)
        };
        // Stay inside the repository: a link that climbs out of it
        // resolves on this machine and nowhere else.
        let mut depth = 0i64;
        for c in dest.strip_prefix(top).unwrap().components() {
            match c {
                Component::ParentDir => depth -= 1,
                Component::Normal(_) => depth += 1,
                _ => {}
            }
            if depth < 0 {
                break;
            }
        }
        if depth < 0 {
            bad.push(format!("{at}: outside the repository"));
            continue;
        }
        if !dest.exists() {
            bad.push(format!("{at}: no such file"));
            continue;
        }
        if let Some(anchor) = anchor {
            if dest.extension().is_none_or(|x| x != "md") {
                bad.push(format!("{at}: an anchor into a file that is not markdown"));
                continue;
            }
            let have = anchors(&read(&dest));
            if !have.iter().any(|a| a == anchor) {
                bad.push(format!(
                    "{at}: no heading `#{anchor}` in {} (it has: {})",
                    dest.strip_prefix(top).unwrap_or(&dest).display(),
                    have.join(", ")
                ));
            }
        }
    }
    bad
}

// ---- the checks ------------------------------------------------------------

#[test]
fn every_relative_link_of_the_markdown_files_resolves() {
    let files = markdown_files();
    assert!(files.iter().any(|f| f.ends_with("README.md")) && files.len() > 5);
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| broken_links(f, &root()))
        .collect();
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_link_check_finds_a_broken_link_and_passes_a_good_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("docs")).unwrap();
    std::fs::write(
        d.join("docs/page.md"),
        "# A page\n\n## Its `second` part: more\n\n## Its `second` part: more\n",
    )
    .unwrap();
    std::fs::write(d.join("notes.txt"), "").unwrap();
    std::fs::write(
        d.join("README.md"),
        "# Top\n\
         [good](docs/page.md) [good](docs/page.md#its-second-part-more) \
         [good](docs/page.md#its-second-part-more-1) [good](#top) [good](notes.txt) \
         ![good](docs/) [web](https://example.com/x.md#nothing) `[code](nowhere.md)`\n\
         [missing](docs/gone.md)\n\
         [bad anchor](docs/page.md#no-such-part)\n\
         [bad anchor here](#nothing)\n\
         [anchor into text](notes.txt#x)\n\
         ```sh\n[in a block](nowhere.md)\n```\n\
         [ref]: docs/also-gone.md\n\
         [up and out](../elsewhere.md)\n",
    )
    .unwrap();
    let bad = broken_links(&d.join("README.md"), d);
    let lines: Vec<&str> = bad
        .iter()
        .map(|b| b.split(": (").nth(1).unwrap().split(')').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "docs/gone.md",
            "docs/page.md#no-such-part",
            "#nothing",
            "notes.txt#x",
            "docs/also-gone.md",
            "../elsewhere.md"
        ],
        "{bad:#?}"
    );
}

#[test]
fn the_readme_stays_under_160_lines() {
    let n = read(&root().join("README.md")).lines().count();
    assert!(
        n < 160,
        "README.md has {n} lines: move the detail into docs/"
    );
}

#[test]
fn the_readme_links_every_page_of_docs() {
    let readme = read(&root().join("README.md"));
    let linked: Vec<String> = links(&readme)
        .into_iter()
        .map(|(_, t)| t.split('#').next().unwrap().to_owned())
        .collect();
    let missing: Vec<String> = doc_pages()
        .iter()
        .skip(1)
        .map(|p| rel(p))
        .filter(|p| !linked.contains(p))
        .collect();
    assert!(missing.is_empty(), "README.md does not link {missing:?}");
}

/// The lines of `text` from the heading line `heading` to the next
/// heading of the same or a higher level.
fn section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let level = heading.chars().take_while(|&c| c == '#').count();
    let mut lines = text.lines().skip_while(|l| l.trim_end() != heading);
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let mut out = vec![first];
    for l in lines {
        let h = l.chars().take_while(|&c| c == '#').count();
        if h > 0 && h <= level && l[h..].starts_with(' ') {
            break;
        }
        out.push(l);
    }
    out
}

#[test]
fn the_readmes_test_command_is_the_one_ci_runs() {
    let readme = read(&root().join("README.md"));
    let (blocks, _) = split_fences(&section(&readme, "## Run the tests").join("\n"));
    let command = blocks
        .iter()
        .find(|b| b.is_shell())
        .expect("a sh block under ## Run the tests")
        .text
        .trim()
        .to_owned();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(&words[..2], ["cargo", "test"], "{command}");
    let ci = read(&root().join(".ci/run"));
    assert!(
        ci.lines().any(|l| {
            let have: Vec<&str> = l.split_whitespace().collect();
            have.starts_with(&["cargo", "test"]) && words.iter().all(|w| have.contains(w))
        }),
        ".ci/run runs no `{command}`"
    );
}

#[test]
fn the_readmes_fixture_summary_is_what_the_build_prints() {
    let readme = read(&root().join("README.md"));
    let (blocks, _) =
        split_fences(&section(&readme, "## Try it on the bundled fixtures").join("\n"));
    let shown = blocks
        .iter()
        .find(|b| b.info.first().is_some_and(|l| l == "text"))
        .expect("the summary's text block")
        .text
        .trim()
        .to_owned();
    let dir = tempfile::tempdir().unwrap();
    let out = crate::util::pi_index(dir.path())
        .arg("build")
        .arg(root().join("fixtures/sessions"))
        .arg("--index")
        .arg(dir.path().join("index"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    // The same up to the time it took.
    let upto = |s: &str| s.split(" in ").next().unwrap().to_owned();
    assert_eq!(
        upto(&shown),
        upto(printed.trim()),
        "README.md shows:\n{shown}\nthe build printed:\n{printed}"
    );
}

#[test]
fn the_readmes_performance_rows_are_rows_of_the_full_table() {
    let readme = read(&root().join("README.md"));
    let rows: Vec<&str> = section(&readme, "## Performance")
        .into_iter()
        .filter(|l| l.starts_with('|'))
        .collect();
    let perf = read(&root().join("docs/performance.md"));
    let (begin, end) = (
        "<!-- bench.py table: begin -->",
        "<!-- bench.py table: end -->",
    );
    assert_eq!(
        perf.matches(begin).count(),
        1,
        "docs/performance.md: one {begin}"
    );
    assert_eq!(
        perf.matches(end).count(),
        1,
        "docs/performance.md: one {end}"
    );
    let table = &perf[perf.find(begin).unwrap()..perf.find(end).unwrap()];
    let full: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
    assert!(
        full.len() > 10,
        "the full table between the markers: {table}"
    );
    assert!(
        (2 + 3..=2 + 5).contains(&rows.len()),
        "README.md's performance table: its header and 3 to 5 headline rows, not {}",
        rows.len()
    );
    assert_eq!(
        rows[..2],
        full[..2],
        "README.md's header is the full table's"
    );
    let strays: Vec<&&str> = rows.iter().filter(|r| !full.contains(r)).collect();
    assert!(
        strays.is_empty(),
        "rows of README.md that are not (verbatim) rows of docs/performance.md's table:\n{}",
        strays
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---- the doc commands ------------------------------------------------------

/// The scratch world a page's blocks run in: HOME with Pi's session
/// directory holding the fixtures, a private /tmp, `pi-index` first on
/// PATH, and a working directory that shows the repository's fixtures,
/// scripts and integrations.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::Builder::new().prefix("docs").tempdir().unwrap();
        let d = dir.path();
        let sessions = d.join("home/.pi/agent/sessions");
        copy_dir(&root().join("fixtures/sessions"), &sessions);
        for sub in ["tmp", "bin", "work"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_pi-index"), d.join("bin/pi-index")).unwrap();
        for name in ["fixtures", "scripts", "integrations"] {
            std::os::unix::fs::symlink(root().join(name), d.join("work").join(name)).unwrap();
        }
        World { dir }
    }

    /// Run one block's text; Err says how it failed, with its output.
    fn run(&self, text: &str, timeout: Duration) -> Result<(), String> {
        let d = self.dir.path();
        let tmp = format!("{}/", d.join("tmp").display());
        let script = text
            .replace("cargo run --release -- ", "pi-index ")
            .replace("/tmp/", &tmp);
        let (out, err) = (d.join("stdout"), d.join("stderr"));
        let path = format!(
            "{}:{}",
            d.join("bin").display(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
        );
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(format!("set -eo pipefail\n{script}"))
            .current_dir(d.join("work"))
            .env_clear()
            .env("PATH", path)
            .env("HOME", d.join("home"))
            .env("TMPDIR", d.join("tmp"))
            .env("LANG", "C.UTF-8")
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .spawn()
            .expect("bash");
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > timeout {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let tail = |p: &Path| {
            let s = std::fs::read_to_string(p).unwrap_or_default();
            let lines: Vec<&str> = s.lines().collect();
            lines[lines.len().saturating_sub(15)..].join("\n")
        };
        match status {
            Some(s) if s.success() => Ok(()),
            Some(s) => Err(format!(
                "{s}\n--- stderr (end):\n{}\n--- stdout (end):\n{}",
                tail(&err),
                tail(&out)
            )),
            None => Err(format!(
                "still running after {timeout:?}: killed\n--- stderr (end):\n{}",
                tail(&err)
            )),
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn every_sh_block_of_the_docs_runs() {
    let mut failed = Vec::new();
    let mut ran = Vec::new();
    for page in doc_pages() {
        let (blocks, _) = split_fences(&read(&page));
        let world = World::new();
        for b in blocks.iter().filter(|b| b.is_shell()) {
            let at = format!("{}:{}", rel(&page), b.line);
            if b.no_run() {
                eprintln!(
                    "not run (no-run): {at}: {}",
                    b.text.lines().next().unwrap_or("")
                );
                continue;
            }
            match world.run(&b.text, BLOCK_TIMEOUT) {
                Ok(()) => ran.push(at),
                Err(why) => failed.push(format!("{at}:\n{}\n{why}", b.text.trim_end())),
            }
        }
    }
    eprintln!("ran {} blocks: {}", ran.len(), ran.join(", "));
    assert!(
        failed.is_empty(),
        "doc commands that failed:\n\n{}",
        failed.join("\n\n")
    );
    // The README's two runnable blocks at least (the fixtures, the
    // quick start), and those of the guide: a parser that found no block
    // would pass everything.
    for page in ["README.md", "docs/guide.md"] {
        assert!(
            ran.iter()
                .filter(|r| r.starts_with(&format!("{page}:")))
                .count()
                >= 2,
            "{page}: fewer than two blocks ran: {ran:?}"
        );
    }
}

#[test]
fn a_doc_command_that_breaks_fails_its_block() {
    let (blocks, _) = split_fences(
        "Text.\n\n\
         ```sh\npi-index build fixtures/sessions --index /tmp/i -q\npi-index search notify --index /tmp/i\n```\n\n\
         - in a list:\n\n  ```sh\n  pi-index search notify --index /tmp/i --no-such-flag\n  ```\n\n\
         ```sh\npi-index search notify --index /tmp/i -n 1\nfalse\necho never\n```\n\n\
         ```sh no-run\npi-index pick\n```\n\n\
         ```text\nnot a command\n```\n",
    );
    let shell: Vec<&Block> = blocks.iter().filter(|b| b.is_shell()).collect();
    assert_eq!(shell.len(), 4);
    assert_eq!(
        shell.iter().map(|b| b.no_run()).collect::<Vec<_>>(),
        [false, false, false, true]
    );
    let world = World::new();
    // The fixtures build and a search finds the word (cargo's own
    // binary, a private /tmp).
    world.run(&shell[0].text, BLOCK_TIMEOUT).unwrap();
    // A flag that does not exist: clap's usage error, exit 2.
    let err = world.run(&shell[1].text, BLOCK_TIMEOUT).unwrap_err();
    assert!(
        err.starts_with("exit status: 2") && err.contains("--no-such-flag"),
        "{err}"
    );
    // A command that fails in the middle of a block fails the block.
    let err = world.run(&shell[2].text, BLOCK_TIMEOUT).unwrap_err();
    assert!(err.starts_with("exit status: 1"), "{err}");
    // A block that never ends is killed, and fails.
    let err = world
        .run("sleep 30\n", Duration::from_millis(300))
        .unwrap_err();
    assert!(err.starts_with("still running"), "{err}");
}
