//! How long a query may be, checked before it is parsed, and how a value
//! from a request is shown in an error message.
//!
//! Every word of a query becomes at least one term query, and tantivy
//! holds a scorer, a block of postings and (for phrases) positions for
//! each: memory grows with the words, not with the index, to gigabytes
//! for a long enough query
//! ([docs/performance.md](../../../docs/performance.md#hostile-input)).
//! [`check`] bounds a query's length in bytes and in words; the library's
//! searches ([`crate::search::hits::search`] and
//! [`crate::search::sessions::search_sessions`]) call it before anything
//! else, so the command line, the picker and the MCP server share the one
//! definition. A query within the limits costs a few MB.
//!
//! A value a request carries may be anything, a 100,000-character word
//! too: [`shown`] is how an error message quotes one, cut short.
//!
//! How deep a ranked list is paged is bounded the same way, for every
//! front end: a search ranks the first `offset + limit` matches, so an
//! offset is work and memory a client chooses. [`check_offset`] refuses
//! one past [`MAX_OFFSET`]; the library's searches call it, and clamp the
//! rest of a page to the documents the index holds, so no allocation is
//! sized by a number a client sent.

/// The most bytes a query may have (UTF-8). A question pasted whole, an
/// error line and a path or two fit many times over.
pub const MAX_QUERY_BYTES: usize = 4096;

/// The most words a query may have: runs of letters and digits, which is
/// about how many terms the tokenizer makes of it (`serde_json::from_str`
/// is three words). Lucene's default clause limit is 1,024; a query is
/// typed or written by a model, and 256 words is a long paragraph.
pub const MAX_QUERY_WORDS: usize = 256;

/// Characters of a value quoted in an error message before it is cut.
pub const SHOWN_CHARS: usize = 60;

/// The most results skipped before a page of a ranked list (hits, or
/// sessions found by a query): the command line's `--offset`, MCP's and
/// the web API's `offset`. Deeper pages are a narrower query's job.
pub const MAX_OFFSET: usize = 1000;

/// An offset past [`MAX_OFFSET`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooDeep {
    /// The offset asked for.
    pub offset: u64,
}

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "offset {} is more than {MAX_OFFSET}, the deepest a search pages: narrow the query \
             instead (more words, `cwd:`, `after:`, `role:`)",
            self.offset
        )
    }
}

impl std::error::Error for TooDeep {}

/// `offset` if it is at most [`MAX_OFFSET`].
pub fn check_offset(offset: u64) -> Result<usize, TooDeep> {
    match usize::try_from(offset) {
        Ok(o) if o <= MAX_OFFSET => Ok(o),
        _ => Err(TooDeep { offset }),
    }
}

/// A query over [`MAX_QUERY_BYTES`] or [`MAX_QUERY_WORDS`]. The message
/// gives the limits and the query's size, never the query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLong {
    /// The query's length in bytes.
    pub bytes: usize,
    /// Its words, counted up to one past [`MAX_QUERY_WORDS`] (so
    /// `MAX_QUERY_WORDS + 1` means "more than the limit").
    pub words: usize,
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words = if self.words > MAX_QUERY_WORDS {
            format!("more than {MAX_QUERY_WORDS} words")
        } else if self.words == 1 {
            "1 word".to_owned()
        } else {
            format!("{} words", self.words)
        };
        write!(
            f,
            "the query is too long ({} bytes, {words}): a query may have at most \
             {MAX_QUERY_BYTES} bytes and {MAX_QUERY_WORDS} words; keep the words that set what \
             you look for apart (a name, an error's distinctive words) and leave out the rest",
            self.bytes
        )
    }
}

impl std::error::Error for TooLong {}

/// Whether `query` is within [`MAX_QUERY_BYTES`] and [`MAX_QUERY_WORDS`].
/// Costs one pass over at most `MAX_QUERY_BYTES` bytes: a longer query is
/// refused by its length, its words counted only that far, so a 1.4 MB
/// query costs no more to refuse than a long one.
pub fn check(query: &str) -> Result<(), TooLong> {
    let bytes = query.len();
    let mut end = bytes.min(MAX_QUERY_BYTES + 1);
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    let words = words(&query[..end], MAX_QUERY_WORDS + 1);
    if bytes <= MAX_QUERY_BYTES && words <= MAX_QUERY_WORDS {
        return Ok(());
    }
    Err(TooLong { bytes, words })
}

/// Runs of letters and digits in `s`, counting up to `stop`.
fn words(s: &str, stop: usize) -> usize {
    let mut n = 0;
    let mut inside = false;
    for c in s.chars() {
        let word = c.is_alphanumeric();
        if word && !inside {
            n += 1;
            if n >= stop {
                return n;
            }
        }
        inside = word;
    }
    n
}

/// `value` as an error message quotes it: in double quotes, escaped as
/// Rust's `{:?}` does, and cut after [`SHOWN_CHARS`] characters with how
/// long it was (`"aaaa…" (100000 characters)`).
pub fn shown(value: &str) -> String {
    match value.char_indices().nth(SHOWN_CHARS) {
        None => format!("{value:?}"),
        Some((i, _)) => format!(
            "{:?} ({} characters)",
            format!("{}…", &value[..i]),
            value.chars().count()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offset_past_the_deepest_page_is_refused_with_the_limit() {
        assert_eq!(check_offset(0), Ok(0));
        assert_eq!(check_offset(MAX_OFFSET as u64), Ok(MAX_OFFSET));
        for deep in [1001, 1_000_000_000, u64::MAX] {
            assert_eq!(check_offset(deep), Err(TooDeep { offset: deep }));
        }
        assert_eq!(
            TooDeep { offset: u64::MAX }.to_string(),
            "offset 18446744073709551615 is more than 1000, the deepest a search pages: narrow \
             the query instead (more words, `cwd:`, `after:`, `role:`)"
        );
    }

    #[test]
    fn a_query_within_the_limits_passes() {
        assert_eq!(check(""), Ok(()));
        assert_eq!(check("tokio runtime role:user after:7d"), Ok(()));
        let words = vec!["w"; MAX_QUERY_WORDS].join(" ");
        assert_eq!(check(&words), Ok(()));
        assert_eq!(check(&"x".repeat(MAX_QUERY_BYTES)), Ok(()));
    }

    #[test]
    fn too_many_words_or_bytes_is_refused_with_the_limits_and_no_query() {
        let words = vec!["w"; MAX_QUERY_WORDS + 1].join(" ");
        let e = check(&words).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the query is too long (513 bytes, more than 256 words): a query may have at most \
             4096 bytes and 256 words; keep the words that set what you look for apart (a name, \
             an error's distinctive words) and leave out the rest"
        );
        // `serde_json::from_str` is three words, as the tokenizer sees it.
        assert_eq!(check(&"a_".repeat(200)), Ok(()));
        assert_eq!(
            check(&"a_".repeat(300)).unwrap_err().words,
            MAX_QUERY_WORDS + 1
        );
        let long = "y".repeat(100_000);
        let e = check(&long).unwrap_err();
        assert_eq!((e.bytes, e.words), (100_000, 1));
        assert!(!e.to_string().contains("yyy"), "{e}");
        assert!(e
            .to_string()
            .starts_with("the query is too long (100000 bytes, 1 word)"));
    }

    #[test]
    fn a_long_value_is_shown_cut_with_its_length() {
        assert_eq!(shown("abc"), "\"abc\"");
        let long = "é".repeat(100_000);
        let s = shown(&long);
        assert_eq!(
            s,
            format!("\"{}…\" (100000 characters)", "é".repeat(SHOWN_CHARS))
        );
        assert_eq!(
            shown(&"x".repeat(SHOWN_CHARS)),
            format!("\"{}\"", "x".repeat(60))
        );
    }
}
