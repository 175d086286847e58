//! `pi-index show SESSION`: the indexed documents of one session.

use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use pi_index::index::PiIndex;

use super::{output, EXIT_OK};

/// Output formats of `show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable conversation.
    Text,
    /// One JSON object per document, in file order.
    Json,
    /// MemPalace's transcript format: `> ` before each user turn, the
    /// reply on the following lines, a blank line after each exchange.
    Transcript,
}

/// Arguments of `pi-index show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A session id, a unique prefix of one, or a session file's path
    /// (any path `build` took, UTF-8 or not).
    pub session: std::ffi::OsString,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Which branch: the active one, or every document in file order.
    #[arg(long, value_enum, default_value_t = Branch::Active)]
    pub branch: Branch,

    /// Show only the messages around this line: a few before and after.
    #[arg(long, value_name = "LINE")]
    pub around: Option<u64>,

    /// With --around: how many messages before and after (more than the
    /// session has is the whole session).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub context: usize,
}

/// Which documents `show` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Branch {
    /// Only the active branch.
    Active,
    /// Every document, abandoned branches included.
    All,
}

/// Run `show`.
pub fn run(args: ShowArgs, index_dir: &Path) -> anyhow::Result<std::process::ExitCode> {
    let pi = PiIndex::open(index_dir)?;
    let searcher = pi.searcher()?;
    // The index stores paths as `build` found them, lossily where they
    // are not UTF-8: an existing file is named the same way.
    let arg = Path::new(&args.session);
    let arg = match std::fs::canonicalize(arg) {
        Ok(path) if path.is_file() => path.to_string_lossy().into_owned(),
        _ => arg.to_string_lossy().into_owned(),
    };
    let key = pi.resolve_session(&searcher, &arg)?;
    let mut docs = pi.session_documents(&searcher, &key)?;
    if let Some(line) = args.around {
        // Around a line: context on both sides, whatever its branch, so a
        // hit on an abandoned branch can be seen where it was said.
        let at = docs.partition_point(|d| d.line < line);
        let at = at.min(docs.len().saturating_sub(1));
        let from = at.saturating_sub(args.context);
        let to = at
            .saturating_add(args.context)
            .saturating_add(1)
            .min(docs.len());
        docs = docs[from..to].to_vec();
    } else if args.branch == Branch::Active {
        docs.retain(|d| d.active);
    }
    if args.format == Format::Json {
        let mut out = output::json_stdout();
        for d in &docs {
            out.line(d)?;
        }
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let mut out = output::stdout(false);
    match args.format {
        Format::Json => unreachable!("printed above"),
        Format::Transcript => {
            let mut open = false;
            for d in &docs {
                match d.role.as_str() {
                    "user" => {
                        if open {
                            writeln!(out)?;
                        }
                        for l in d.text.lines() {
                            writeln!(out, "> {l}")?;
                        }
                        open = true;
                    }
                    "assistant" => {
                        writeln!(out, "{}", d.text)?;
                    }
                    _ => continue,
                }
            }
            if open {
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
