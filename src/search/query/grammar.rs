//! The query grammar: a string in, an [`Ast`] and the repairs made out.
//! Nothing here knows of the index (tantivy's split: its `query-grammar`
//! crate has no index types either); [`compile`](mod@super::compile) turns the tree
//! into a tantivy query.
//!
//! ```text
//! query   := or
//! or      := and ("OR" and)*                 also ||
//! and     := unary (["AND"] unary)*          also &&; juxtaposition is AND
//! unary   := ("NOT" | "-") unary | "+" unary | primary
//! primary := "(" or ")" | "phrase" | key:value | word* | * | word
//! ```
//!
//! So NOT binds tightest, then AND, then OR: `a OR b c` is `a OR (b c)`.
//! `-` and `+` are operators only at the start of a term and directly
//! before it (`-flaky`, `-(a OR b)`); inside a word (`dash-separated`) or
//! alone (`a - b`) they are characters. `AND`, `OR` and `NOT` are
//! operators only in capitals. A filter is one of the keys [`Key`] names
//! followed by a single `:` (`serde_json::from_str` and `session::new`
//! stay words); its value runs to the next space or parenthesis, or is
//! quoted (`cwd:"~/my project"`).
//!
//! Parsing never fails on what it can repair: an unmatched `)` is
//! ignored, an unclosed `(` or `"` is closed at the end, a dangling
//! operator is ignored, and each repair is a [`Warning`] at its character
//! position. A repaired query means exactly what the query reads without
//! the ignored parts. The one error is nesting (parentheses and NOTs)
//! deeper than [`MAX_DEPTH`], which no real query reaches and which would
//! otherwise cost a stack frame per level here and in tantivy.

use std::fmt;

use super::filters::Key;

/// Most parentheses and NOTs nested inside one another.
pub const MAX_DEPTH: usize = 64;

/// Something in the query that was repaired or ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 0-based character position in the query.
    pub position: usize,
    /// What was done.
    pub message: String,
}

/// A query nested deeper than [`MAX_DEPTH`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the query nests parentheses and NOT more than {MAX_DEPTH} deep (at position {position}): \
     write it with fewer levels"
)]
pub struct TooDeep {
    /// Character position of the first operator past the limit.
    pub position: usize,
}

/// A leaf of the query: what one term asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// A bare word, as typed (the index's analyzer splits it later).
    Word(String),
    /// A quoted phrase, without its quotes.
    Phrase(String),
    /// `stem*`: words beginning with `stem` (never empty).
    Prefix(String),
    /// `key:value`. The value is as typed, possibly empty; what it means
    /// is for [`super::filters`] to say.
    Filter {
        /// Which filter.
        key: Key,
        /// Its value, without quotes.
        value: String,
    },
    /// A lone `*`: every message.
    All,
}

/// The parsed query. `And` and `Or` hold at least two children, and never
/// a child of their own kind (`(a b) c` is `And[a, b, c]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ast {
    /// One term, with the character position where it starts.
    Leaf {
        /// What the term asks for.
        leaf: Leaf,
        /// 0-based character position in the query.
        at: usize,
    },
    /// All of these.
    And(Vec<Ast>),
    /// Any of these.
    Or(Vec<Ast>),
    /// Not this.
    Not(Box<Ast>),
}

/// The grammar's result: the tree (`None` when nothing was left to parse)
/// and what was repaired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The query, or `None` when it was empty or only ignored parts.
    pub ast: Option<Ast>,
    /// What was repaired or ignored, in the order it was found.
    pub warnings: Vec<Warning>,
}

/// Parse `query` into a tree, repairing what is broken (see the module
/// docs). Fails only on nesting deeper than [`MAX_DEPTH`]. Linear in the
/// query's length.
pub fn parse(query: &str) -> Result<Parsed, TooDeep> {
    let mut warnings = Vec::new();
    let tokens = balance(lex(query, &mut warnings), &mut warnings);
    let mut p = Parser {
        tokens,
        at: 0,
        warnings,
    };
    let ast = p.or(0)?;
    debug_assert!(p.at == p.tokens.len(), "balanced tokens are all consumed");
    Ok(Parsed {
        ast,
        warnings: p.warnings,
    })
}

/// A token of the query string, with its character position.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Leaf(Leaf),
    Open,
    Close,
    And,
    Or,
    Not,
}

fn is_break(c: char) -> bool {
    c.is_whitespace() || c == '(' || c == ')'
}

/// Split the query into tokens. Never fails: an unterminated quote is
/// closed at the end.
fn lex(q: &str, warnings: &mut Vec<Warning>) -> Vec<(Tok, usize)> {
    let chars: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // Reads a quoted run starting at the quote at `i`; returns the text
    // and the index after the closing quote.
    let quoted = |i: usize, warnings: &mut Vec<Warning>, what: &str| {
        let end = (i + 1..chars.len()).find(|&j| chars[j] == '"');
        let stop = end.unwrap_or(chars.len());
        if end.is_none() {
            warnings.push(Warning {
                position: i,
                message: format!("unterminated quote: {what} closed at the end of the query"),
            });
        }
        let text: String = chars[i + 1..stop].iter().collect();
        (text, (stop + 1).min(chars.len()))
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push((Tok::Open, i));
            i += 1;
        } else if c == ')' {
            out.push((Tok::Close, i));
            i += 1;
        } else if c == '"' {
            let (text, after) = quoted(i, warnings, "the phrase was");
            out.push((Tok::Leaf(Leaf::Phrase(text)), i));
            i = after;
        } else if (c == '-' || c == '+') && next.is_some_and(|n| !n.is_whitespace() && n != ')') {
            // An operator only at the start of a term and attached to it.
            if c == '-' {
                out.push((Tok::Not, i));
            }
            i += 1;
        } else if let Some((key, after_colon)) = filter_key(&chars, i) {
            let (value, after) = if chars.get(after_colon) == Some(&'"') {
                quoted(after_colon, warnings, "the value was")
            } else {
                let end = (after_colon..chars.len())
                    .find(|&j| is_break(chars[j]))
                    .unwrap_or(chars.len());
                (chars[after_colon..end].iter().collect(), end)
            };
            out.push((Tok::Leaf(Leaf::Filter { key, value }), i));
            i = after;
        } else {
            let end = (i..chars.len())
                .find(|&j| is_break(chars[j]))
                .unwrap_or(chars.len());
            let word: String = chars[i..end].iter().collect();
            let tok = match word.as_str() {
                "AND" | "&&" => Tok::And,
                "OR" | "||" => Tok::Or,
                "NOT" => Tok::Not,
                "*" => Tok::Leaf(Leaf::All),
                _ => match word.strip_suffix('*') {
                    Some(stem) => Tok::Leaf(Leaf::Prefix(stem.to_owned())),
                    None => Tok::Leaf(Leaf::Word(word)),
                },
            };
            out.push((tok, i));
            i = end;
        }
    }
    out
}

/// `key:` at `i` for a filter key followed by exactly one colon: the key
/// and the index after the colon.
fn filter_key(chars: &[char], i: usize) -> Option<(Key, usize)> {
    let len = chars[i..]
        .iter()
        .take_while(|c| c.is_ascii_lowercase())
        .count();
    if len == 0 || chars.get(i + len) != Some(&':') || chars.get(i + len + 1) == Some(&':') {
        return None;
    }
    let name: String = chars[i..i + len].iter().collect();
    Key::from_name(&name).map(|k| (k, i + len + 1))
}

/// Drop unmatched `)` and close unclosed `(` at the end, so the parser
/// sees balanced parentheses and a repaired query reads as if the
/// ignored parts were not there.
fn balance(tokens: Vec<(Tok, usize)>, warnings: &mut Vec<Warning>) -> Vec<(Tok, usize)> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut open: Vec<usize> = Vec::new();
    for (tok, at) in tokens {
        match tok {
            Tok::Open => open.push(at),
            Tok::Close if open.pop().is_none() => {
                warnings.push(Warning {
                    position: at,
                    message: "unmatched ')': ignored".into(),
                });
                continue;
            }
            _ => {}
        }
        out.push((tok, at));
    }
    let end = out.last().map_or(0, |(_, at)| *at);
    for at in open.into_iter().rev() {
        warnings.push(Warning {
            position: at,
            message: "unclosed '(': closed at the end".into(),
        });
        out.push((Tok::Close, end));
    }
    out
}

struct Parser {
    tokens: Vec<(Tok, usize)>,
    at: usize,
    warnings: Vec<Warning>,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn position(&self) -> usize {
        self.tokens.get(self.at).map_or(0, |(_, p)| *p)
    }

    fn warn(&mut self, position: usize, message: &str) {
        self.warnings.push(Warning {
            position,
            message: message.into(),
        });
    }

    /// The end of a group: `)` or the end of the query.
    fn at_end(&self) -> bool {
        matches!(self.peek(), None | Some(Tok::Close))
    }

    /// or := and ("OR" and)*
    fn or(&mut self, depth: usize) -> Result<Option<Ast>, TooDeep> {
        let mut parts = Vec::new();
        let start = self.at;
        if let Some(e) = self.and(depth)? {
            parts.push(e);
        }
        let mut left_consumed = self.at > start;
        while let Some(Tok::Or) = self.peek() {
            let p = self.position();
            self.at += 1;
            let before = self.at;
            if let Some(e) = self.and(depth)? {
                parts.push(e);
            }
            let right_consumed = self.at > before;
            if !left_consumed {
                self.warn(p, "OR with nothing before it: ignored");
            } else if !right_consumed && !matches!(self.peek(), Some(Tok::Or)) {
                self.warn(p, "OR with nothing after it: ignored");
            }
            left_consumed = right_consumed;
        }
        Ok(join(parts, true))
    }

    /// and := unary (["AND"] unary)*
    fn and(&mut self, depth: usize) -> Result<Option<Ast>, TooDeep> {
        let mut parts = Vec::new();
        // An AND waiting for its right side, and whether a term was read
        // since the last operator.
        let mut pending_and: Option<usize> = None;
        let mut had_term = false;
        loop {
            match self.peek() {
                None | Some(Tok::Or | Tok::Close) => break,
                Some(Tok::And) => {
                    let p = self.position();
                    self.at += 1;
                    if !had_term {
                        self.warn(p, "AND with nothing before it: ignored");
                    } else {
                        pending_and = Some(p);
                    }
                    had_term = false;
                }
                _ => {
                    if let Some(e) = self.unary(depth)? {
                        parts.push(e);
                    }
                    pending_and = None;
                    had_term = true;
                }
            }
        }
        if let Some(p) = pending_and {
            self.warn(p, "AND with nothing after it: ignored");
        }
        Ok(join(parts, false))
    }

    /// unary := "NOT" unary | primary. Called only on a term's first
    /// token (never an OR, AND or `)`).
    fn unary(&mut self, depth: usize) -> Result<Option<Ast>, TooDeep> {
        let Some((tok, at)) = self.tokens.get(self.at).cloned() else {
            return Ok(None);
        };
        self.at += 1;
        match tok {
            Tok::Not => {
                if depth >= MAX_DEPTH {
                    return Err(TooDeep { position: at });
                }
                if self.at_end() || matches!(self.peek(), Some(Tok::Or | Tok::And)) {
                    self.warn(at, "NOT with nothing after it: ignored");
                    return Ok(None);
                }
                Ok(self.unary(depth + 1)?.map(|e| Ast::Not(Box::new(e))))
            }
            Tok::Open => {
                if depth >= MAX_DEPTH {
                    return Err(TooDeep { position: at });
                }
                let before = self.at;
                let inner = self.or(depth + 1)?;
                let empty = self.at == before;
                // Balanced: this is our `)`.
                self.at += 1;
                if empty {
                    self.warn(at, "empty parentheses: ignored");
                }
                Ok(inner)
            }
            Tok::Leaf(leaf) => Ok(Some(Ast::Leaf { leaf, at })),
            // Never reached: `and` and NOT call this on a term's first
            // token only.
            Tok::And | Tok::Or | Tok::Close => Ok(None),
        }
    }
}

/// One node of `parts` (an `Or` if `or`, else an `And`), flattening
/// children of the same kind.
fn join(parts: Vec<Ast>, or: bool) -> Option<Ast> {
    let mut flat = Vec::with_capacity(parts.len());
    for p in parts {
        match p {
            Ast::Or(children) if or => flat.extend(children),
            Ast::And(children) if !or => flat.extend(children),
            other => flat.push(other),
        }
    }
    match flat.len() {
        0 => None,
        1 => flat.pop(),
        _ if or => Some(Ast::Or(flat)),
        _ => Some(Ast::And(flat)),
    }
}

/// Prints valid query syntax that parses back to the same tree (the
/// positions aside).
impl fmt::Display for Ast {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ast::Leaf { leaf, .. } => write!(f, "{leaf}"),
            Ast::Not(inner) => match **inner {
                Ast::And(_) | Ast::Or(_) => write!(f, "-({inner})"),
                _ => write!(f, "-{inner}"),
            },
            Ast::And(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    match p {
                        Ast::Or(_) => write!(f, "({p})")?,
                        _ => write!(f, "{p}")?,
                    }
                }
                Ok(())
            }
            Ast::Or(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" OR ")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Leaf::Word(w) => f.write_str(w),
            Leaf::Phrase(p) => write!(f, "\"{p}\""),
            Leaf::Prefix(stem) => write!(f, "{stem}*"),
            Leaf::All => f.write_str("*"),
            Leaf::Filter { key, value } => {
                // Unquoted, these would read back otherwise (`role::x` is a
                // word); a quoted value never holds a quote.
                if value.is_empty() || value.starts_with(['"', ':']) || value.chars().any(is_break)
                {
                    write!(f, "{}:\"{value}\"", key.name())
                } else {
                    write!(f, "{}:{value}", key.name())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn word(w: &str, at: usize) -> Ast {
        Ast::Leaf {
            leaf: Leaf::Word(w.into()),
            at,
        }
    }

    fn ast(q: &str) -> Ast {
        parse(q).unwrap().ast.unwrap()
    }

    fn warnings(q: &str) -> Vec<(usize, String)> {
        parse(q)
            .unwrap()
            .warnings
            .into_iter()
            .map(|w| (w.position, w.message))
            .collect()
    }

    /// The tree without positions, to compare a reprinted query's tree.
    fn shape(a: &Ast) -> Ast {
        match a {
            Ast::Leaf { leaf, .. } => Ast::Leaf {
                leaf: leaf.clone(),
                at: 0,
            },
            Ast::And(p) => Ast::And(p.iter().map(shape).collect()),
            Ast::Or(p) => Ast::Or(p.iter().map(shape).collect()),
            Ast::Not(p) => Ast::Not(Box::new(shape(p))),
        }
    }

    #[test]
    fn and_binds_tighter_than_or_and_not_tightest() {
        assert_eq!(ast("a OR b c").to_string(), "a OR b c");
        assert_eq!(
            ast("a OR b c"),
            Ast::Or(vec![
                word("a", 0),
                Ast::And(vec![word("b", 5), word("c", 7)])
            ])
        );
        assert_eq!(
            ast("a b OR c"),
            Ast::Or(vec![
                Ast::And(vec![word("a", 0), word("b", 2)]),
                word("c", 7)
            ])
        );
        assert_eq!(
            ast("NOT a b"),
            Ast::And(vec![Ast::Not(Box::new(word("a", 4))), word("b", 6)])
        );
        assert_eq!(ast("(a OR b) c").to_string(), "(a OR b) c");
        assert_eq!(shape(&ast("a AND b && c")), shape(&ast("a b c")));
        assert_eq!(shape(&ast("a || b")), shape(&ast("a OR b")));
    }

    #[test]
    fn filters_are_leaves_under_every_operator() {
        let a = ast("notify -role:user");
        assert_eq!(
            a,
            Ast::And(vec![
                word("notify", 0),
                Ast::Not(Box::new(Ast::Leaf {
                    leaf: Leaf::Filter {
                        key: Key::Role,
                        value: "user".into()
                    },
                    at: 8
                }))
            ])
        );
        assert_eq!(
            ast("NFS OR role:assistant").to_string(),
            "NFS OR role:assistant"
        );
        assert_eq!(
            ast("(cwd:\"/a b\" OR since:7d) x").to_string(),
            "(cwd:\"/a b\" OR after:7d) x"
        );
        // Not filters: unknown keys, Rust paths, URLs.
        for q in [
            "serde_json::from_str",
            "session::new",
            "http://x",
            "Role:user",
        ] {
            assert_eq!(ast(q), word(q, 0), "{q}");
        }
        assert_eq!(
            ast("session:"),
            Ast::Leaf {
                leaf: Leaf::Filter {
                    key: Key::Session,
                    value: String::new()
                },
                at: 0
            }
        );
    }

    #[test]
    fn dashes_are_operators_only_before_a_term() {
        assert_eq!(
            ast("dash - separated"),
            Ast::And(vec![word("dash", 0), word("-", 5), word("separated", 7)])
        );
        assert_eq!(ast("dash-separated"), word("dash-separated", 0));
        assert_eq!(ast("+a"), word("a", 1));
        assert_eq!(ast("--a").to_string(), "--a");
        assert_eq!(ast("-(a b)").to_string(), "-(a b)");
        assert_eq!(
            ast("*"),
            Ast::Leaf {
                leaf: Leaf::All,
                at: 0
            }
        );
        assert_eq!(ast("-*").to_string(), "-*");
        assert_eq!(ast("pars*").to_string(), "pars*");
    }

    #[test]
    fn repairs_are_warned_at_their_position() {
        assert_eq!(
            warnings("tokio OR"),
            vec![(6, "OR with nothing after it: ignored".into())]
        );
        assert_eq!(
            warnings("OR tokio"),
            vec![(0, "OR with nothing before it: ignored".into())]
        );
        assert_eq!(
            warnings("a OR OR b"),
            vec![(5, "OR with nothing before it: ignored".into())]
        );
        assert_eq!(
            warnings("a b NOT"),
            vec![(4, "NOT with nothing after it: ignored".into())]
        );
        assert_eq!(
            warnings("a AND"),
            vec![(2, "AND with nothing after it: ignored".into())]
        );
        assert_eq!(
            warnings("tokio)"),
            vec![(5, "unmatched ')': ignored".into())]
        );
        assert_eq!(
            warnings("x (tokio OR async"),
            vec![(2, "unclosed '(': closed at the end".into())]
        );
        assert_eq!(
            warnings("a \"half phrase"),
            vec![(
                2,
                "unterminated quote: the phrase was closed at the end of the query".into()
            )]
        );
        assert_eq!(
            warnings("a ()"),
            vec![(2, "empty parentheses: ignored".into())]
        );
        // Ignored parts leave the query as if they were not written.
        assert_eq!(shape(&ast("a OR b) c")), shape(&ast("a OR b c")));
        assert_eq!(shape(&ast("a OR")), shape(&ast("a")));
        assert_eq!(shape(&ast("-(a OR b")), shape(&ast("-(a OR b)")));
    }

    #[test]
    fn nothing_but_ignored_parts_leaves_no_tree() {
        for q in ["", "  ", "OR", "))((", "()", "NOT", "AND OR"] {
            let p = parse(q).unwrap();
            assert_eq!(p.ast, None, "{q}");
            assert_eq!(p.warnings.is_empty(), q.trim().is_empty(), "{q}");
        }
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_stack_overflow() {
        let nots = format!("{}x", "NOT ".repeat(1000));
        assert_eq!(parse(&nots), Err(TooDeep { position: 256 }));
        let opens = "(".repeat(20_000);
        assert_eq!(parse(&opens), Err(TooDeep { position: 64 }));
        let dashes = format!("{}x", "-".repeat(MAX_DEPTH + 1));
        assert!(parse(&dashes).is_err());
        let ok = format!("{}x{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(parse(&ok).unwrap().ast, Some(word("x", MAX_DEPTH)));
        // Many siblings are not depth.
        assert!(parse(&"-a ".repeat(10_000)).is_ok());
        assert!(parse(&")".repeat(20_000)).is_ok());
    }

    fn query_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("(".to_string()),
            Just(")".to_string()),
            Just("\"".to_string()),
            Just("-".to_string()),
            Just("+".to_string()),
            Just("*".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            Just("OR".to_string()),
            Just("AND".to_string()),
            Just("NOT".to_string()),
            Just("||".to_string()),
            Just("role:".to_string()),
            Just("cwd:".to_string()),
            Just("since:".to_string()),
            Just("branch:".to_string()),
            "[a-z]{1,4}",
            "[a-zA-Z0-9_./-]{1,6}",
            "\\PC{1,3}",
            any::<char>().prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_string_parses_and_prints_back_to_the_same_tree(q in query_text()) {
            let parsed = parse(&q).unwrap();
            for w in &parsed.warnings {
                prop_assert!(w.position <= q.chars().count());
            }
            if let Some(a) = parsed.ast {
                let printed = a.to_string();
                let again = parse(&printed).unwrap();
                prop_assert!(again.warnings.is_empty(), "{printed:?}: {:?}", again.warnings);
                prop_assert_eq!(again.ast.as_ref().map(shape), Some(shape(&a)), "{:?}", printed);
            }
        }

        #[test]
        fn arbitrary_text_never_panics(q in any::<String>()) {
            let _ = parse(&q);
        }
    }
}
