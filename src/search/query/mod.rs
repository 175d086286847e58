//! The query language: words, phrases, boolean operators, prefixes and
//! filters, turned into a tantivy query in two steps (tantivy's own
//! split):
//!
//! - [`grammar`]: the string to a tree ([`grammar::Ast`]) and the repairs
//!   made on the way ([`Warning`]); knows nothing of the index.
//! - [`filters`]: a filter's value to a typed [`Constraint`] (roles,
//!   directories, session ids, models, times, branches).
//! - [`filter_term`]: a filter on an indexed term (`role:`) that scores
//!   0 and still lets tantivy prune an AND of words.
//! - [`limits`]: how long a query may be, checked before it is parsed.
//! - [`compile`](mod@compile): the tree and the flags to one tantivy
//!   query; the analyzer decides about words, and [`FieldMap`] is the one
//!   place that names the schema's fields.
//!
//! ```text
//! error handling         both words (AND is implied)
//! "exact phrase"         a phrase (the tokenizer's positions decide)
//! tokio OR async-std     either; AND binds tighter: a OR b c = a OR (b c)
//! -flaky  NOT flaky      must not occur (filters too: -role:user)
//! (a OR b) c             grouping
//! pars*                  prefix;  * alone: every message
//! role:user cwd:~/proj session:019b name:flaky model:opus after:7d before:2026-03-01 branch:active
//! ```

pub mod compile;
pub mod error;
pub mod expand;
pub mod filter_term;
pub mod filters;
pub mod grammar;
pub mod limits;
pub mod sort;

pub use compile::{compile, Compiled, FieldMap, Scope};
pub use error::QueryError;
pub use filters::{
    normalize_dir, parse_when, Branches, Constraint, FilterError, Filters, Key, Now,
};
pub use grammar::{Warning, MAX_DEPTH};
pub use limits::{shown, TooDeep, TooLong, MAX_OFFSET, MAX_QUERY_BYTES, MAX_QUERY_WORDS};
pub use sort::Sort;
