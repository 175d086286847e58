//! The source a command reads: the team database when one is named
//! (`--db URL`, or `--db` alone and `PI_INDEX_DATABASE_URL`), else the
//! local index.

use std::path::Path;
use std::time::Duration;

use super::source::{ReadError, Source};
use crate::search::Local;
use crate::team::{Team, TeamError, URL_VAR};

/// The database `--db` names: its URL when given, else
/// `PI_INDEX_DATABASE_URL` (`--db` alone).
pub fn database_url(given: &str) -> Result<String, TeamError> {
    if !given.is_empty() {
        return Ok(given.to_owned());
    }
    std::env::var(URL_VAR)
        .ok()
        .filter(|u| !u.is_empty())
        .ok_or(TeamError::NoUrl)
}

/// The team database at `db` (see [`database_url`]) when given, else the
/// local index at `index_dir` as of its last commit.
pub fn open(db: Option<&str>, index_dir: &Path) -> Result<Box<dyn Source>, ReadError> {
    Ok(match db {
        Some(url) => Box::new(Team::connect(&database_url(url)?)?),
        None => Box::new(Local::open(index_dir)?),
    })
}

/// The team database at `url` for a long-running front end (the web
/// view, the MCP server): its tables checked before anything is served,
/// its connections read-only, each statement within `timeout`.
pub fn serving(url: &str, timeout: Duration) -> Result<Box<dyn Source>, ReadError> {
    Ok(Box::new(Team::serving(&database_url(url)?, timeout)?))
}
