//! `pi-index show SESSION`: the indexed documents of one session.

use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use pi_index::index::PiIndex;

use super::EXIT_OK;

/// Output formats of `show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable conversation.
    Text,
    /// One JSON object per document, in file order.
    Json,
}

/// Arguments of `pi-index show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A session id, a unique prefix of one, or a session file's path.
    pub session: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Run `show`.
pub fn run(args: ShowArgs, index_dir: &Path) -> anyhow::Result<i32> {
    let pi = PiIndex::open(index_dir)?;
    let searcher = pi.searcher()?;
    let key = pi.resolve_session(&searcher, &args.session)?;
    let docs = pi.session_documents(&searcher, &key)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        Format::Json => {
            for d in &docs {
                serde_json::to_writer(&mut out, d)?;
                writeln!(out)?;
            }
        }
        Format::Text => {
            if let Some(first) = docs.first() {
                let title = first.session_name.as_deref().unwrap_or("(unnamed session)");
                writeln!(out, "# {title}")?;
                writeln!(
                    out,
                    "session {}  cwd {}",
                    first.session_id,
                    first.cwd.as_deref().unwrap_or("?")
                )?;
                writeln!(out, "file {}", first.path)?;
            }
            for d in &docs {
                let branch = if d.active { "" } else { " (abandoned branch)" };
                writeln!(
                    out,
                    "\n[{}] {} line {}{}",
                    d.role,
                    d.timestamp.as_deref().unwrap_or("-"),
                    d.line,
                    branch
                )?;
                writeln!(out, "{}", d.text)?;
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
