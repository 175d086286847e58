//! Comments say what was decided and why; the numbers that decided it
//! live in `docs/performance.md`, where they say what was measured and
//! how.
//!
//! - No comment line of `src/` (or `build.rs`) quotes a measurement: a
//!   time (`4.3 ms`, `25-30 ms`, `~15 ms`, `0.6 s`), a ratio (`1.3x`), a
//!   difference in per cent (`19% more`), an instruction count
//!   (`callgrind`, `Ir`), page faults counted (`495 page faults`), or a
//!   commit (a token of 7 to 40 hex digits with both digits and letters).
//!   A limit is not a measurement: a whole number of a time unit after a
//!   word that sets one (`every 2 seconds`, `after 5 s`, `at most 100
//!   ms`) or before `per` (`5 s per request`) passes, and so do sizes.
//! - Every link from a comment of `src/` (or `build.rs`) into `docs/`
//!   resolves: the page exists and has the anchor.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The product's code: every `.rs` file below `src/`, in name order, and
/// `build.rs`.
fn rust_files() -> Vec<PathBuf> {
    let mut out = vec![root().join("build.rs")];
    for e in walkdir::WalkDir::new(root().join("src")).sort_by_file_name() {
        let e = e.unwrap();
        if e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs") {
            out.push(e.into_path());
        }
    }
    out
}

/// The comment of a line, if the line is one: its text after `//`,
/// `///` or `//!`.
fn comment(line: &str) -> Option<&str> {
    line.trim_start()
        .strip_prefix("//")
        .map(|c| c.trim_start_matches(['/', '!']))
}

/// The text with its inline code spans (`` `...` ``) blanked: a query
/// written in a comment (`` `90s` ``, `` `after:7d` ``) is syntax, not a
/// time.
fn without_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for c in text.chars() {
        if c == '`' {
            inside = !inside;
            out.push(' ');
        } else {
            out.push(if inside { ' ' } else { c });
        }
    }
    out
}

const TIME_UNITS: &[&str] = &[
    "ms",
    "µs",
    "us",
    "ns",
    "s",
    "sec",
    "second",
    "seconds",
    "millisecond",
    "milliseconds",
    "microseconds",
    "nanoseconds",
    "CPU-s",
    "CPU-seconds",
];

/// Words after which a whole number of a time unit is a limit the code
/// sets, not a measurement.
const LIMIT_WORDS: &[&str] = &[
    "every", "after", "within", "most", "least", "than", "per", "to", "for", "of", "idle",
    "timeout", "waits", "wait", "lasts", "up", "each", "past", "over", "under", "by",
];

const PER_CENT_WORDS: &[&str] = &[
    "more", "less", "faster", "slower", "longer", "shorter", "larger", "smaller", "fewer",
];

/// What in `line` (a comment's text) quotes a measurement, if anything.
fn measurement(line: &str) -> Option<String> {
    if let Some(hash) = commit(line) {
        return Some(format!("a commit ({hash})"));
    }
    let text = without_code(line);
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        if word.eq_ignore_ascii_case("callgrind")
            || word.eq_ignore_ascii_case("cachegrind")
            || word == "Ir"
        {
            return Some(format!("an instruction count ({word})"));
        }
    }
    let b: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_alphanumeric() || b[i - 1] == '_' || b[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        // A number: digits with `.` or `,` inside, and a range (`25-30`).
        let start = i;
        let mut exact = true;
        while i < b.len() {
            if b[i].is_ascii_digit() {
                i += 1;
            } else if (b[i] == '.' || b[i] == ',' || b[i] == '-')
                && i + 1 < b.len()
                && b[i + 1].is_ascii_digit()
            {
                if b[i] != ',' {
                    exact = false;
                }
                i += 1;
            } else {
                break;
            }
        }
        let number: String = b[start..i].iter().collect();
        let approx = start > 0 && b[start - 1] == '~';
        let before: String = b[..start].iter().collect();
        let previous = before
            .split(|c: char| !c.is_alphanumeric())
            .rfind(|w| !w.is_empty())
            .unwrap_or("");
        // Page faults counted: `495 page faults`.
        let after: String = b[i..].iter().collect();
        if after.trim_start().starts_with("page fault") {
            return Some(format!("page faults counted ({number})"));
        }
        // A ratio: `1.3x`, `2x`.
        if i < b.len() && b[i] == 'x' && (i + 1 == b.len() || !b[i + 1].is_alphanumeric()) {
            return Some(format!("a ratio ({number}x)"));
        }
        // Per cent of a difference: `19% more`.
        if i < b.len() && b[i] == '%' {
            let next: String = b[i + 1..].iter().collect();
            let next = next.split_whitespace().next().unwrap_or("");
            let next = next.trim_matches(|c: char| !c.is_alphanumeric());
            if PER_CENT_WORDS.contains(&next) {
                return Some(format!("a difference in per cent ({number}% {next})"));
            }
        }
        // A time: the number, a space or none, and a unit word.
        let mut j = i;
        if j < b.len() && b[j] == ' ' {
            j += 1;
        }
        let unit_end = (j..b.len())
            .find(|&k| !(b[k].is_alphanumeric() || b[k] == 'µ' || b[k] == '-'))
            .unwrap_or(b.len());
        let unit: String = b[j..unit_end].iter().collect();
        let unit = unit.trim_end_matches('-');
        // A bare `s` needs its space unless the number is a decimal
        // (`0.6s`): `2020s` is a decade.
        let glued_s = unit == "s" && j == i && exact;
        if TIME_UNITS.contains(&unit) && !glued_s {
            let next: String = b[unit_end..].iter().collect();
            let per = next.split_whitespace().next() == Some("per");
            let limit = exact
                && !approx
                && (per || LIMIT_WORDS.contains(&previous.to_lowercase().as_str()));
            if !limit {
                return Some(format!("a time ({number} {unit})"));
            }
        }
    }
    None
}

/// A token of 7 to 40 hex digits with both digits and letters, which
/// is not part of a longer word, of a `0x` literal or of a UUID.
fn commit(line: &str) -> Option<&str> {
    let hexish = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    line.split(|c: char| !hexish(c))
        .filter(|w| !w.contains('-') && !w.starts_with("0x"))
        .find(|w| {
            (7..=40).contains(&w.len())
                && w.chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
                && w.chars().any(|c| c.is_ascii_digit())
                && w.chars().any(|c| c.is_ascii_alphabetic())
        })
}

#[test]
fn the_measurement_finder_tells_measurements_from_limits() {
    let measured = [
        "1.08-1.13x less (41.5 -> 33.4 ms in a slow hour)",
        "sorting every file found was 1.5 ms of a build",
        "thirds of such a search (~11 ms).",
        "a common word costs 1.6x what it costs",
        "took 25 ms for `HashMap` on the benchmark",
        "nothing: ~15 ms); it runs on its own thread",
        "the build takes 0.10-0.23 CPU-seconds",
        "(`examples/tokenize.rs` under callgrind): see the commit.",
        "135 of its 495 page faults for `error`",
        "groups alone (`5cc1d55`): a file of version 2",
        "Emitting every run of parts had cost ~19% more again.",
        "a 10 GB build took 2x less CPU",
        "a lookup of seven columns per file: 25-30 ms of one core",
    ];
    let limits = [
        "10 minutes idle, 64 sessions, 5 s per request part.",
        "stdin closes (after 5 s), each without a reply.",
        "session directories as they change (and looked at every 2 seconds).",
        "| `7d`, `12h`, `30m`, `90s`, `2w` | that long before now",
        "`1234567` as `1,234,567`.",
        "at most 1 MiB of text, 256 positions per lexeme",
        "pass between two releases (every 100 ms).",
        "an id such as `019a2b3c-4d5e-7f00-8a9b-0c1d2e3f4a5b`",
        "a mask of `0xdeadbeef1`",
        "Oh My Pi: instructions it injects into the conversation",
        "Files of several chunks are where page faults add up",
        "spread over 14 MB of `.text`, and each page fault maps only the 64 KB",
        "a decade: 2020s",
        "a timestamp in ms since the epoch",
    ];
    for m in measured {
        assert!(measurement(m).is_some(), "not found in {m:?}");
    }
    for l in limits {
        assert_eq!(measurement(l), None, "{l:?}");
    }
}

#[test]
fn no_comment_of_the_code_quotes_a_measurement() {
    let mut found = Vec::new();
    for file in rust_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = comment(line).and_then(measurement) {
                found.push(format!(
                    "{}:{}: {what}: {}",
                    file.strip_prefix(root()).unwrap().display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "{} comment lines quote a measurement; say the decision in a sentence and link the \
         section of docs/performance.md that holds the numbers:\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn every_link_from_a_comment_of_the_code_into_docs_resolves() {
    let mut bad = Vec::new();
    let mut seen = 0;
    for file in rust_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(c) = comment(line) else { continue };
            let mut rest = c;
            while let Some(at) = rest.find("](") {
                let after = &rest[at + 2..];
                let end = after.find(')').unwrap_or(after.len());
                let target = &after[..end];
                rest = &after[end..];
                if !target.contains("docs/") || target.contains("://") {
                    continue;
                }
                seen += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let page = file.parent().unwrap().join(path);
                let at = format!(
                    "{}:{}: ({target})",
                    file.strip_prefix(root()).unwrap().display(),
                    n + 1
                );
                let Ok(page_text) = std::fs::read_to_string(&page) else {
                    bad.push(format!("{at}: no such file"));
                    continue;
                };
                if !anchor.is_empty()
                    && !crate::docs::anchors(&page_text).iter().any(|a| a == anchor)
                {
                    bad.push(format!("{at}: no such heading"));
                }
            }
        }
    }
    assert!(seen > 0, "no link from src/ into docs/ was read");
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}
