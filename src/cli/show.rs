//! `pi-index show SESSION`: the indexed documents of one session.

use pi_index::output::OneLine;
use std::io::Write;
use std::path::Path;

use clap::{Args, ValueEnum};

use pi_index::pi::Edited;
use pi_index::read::{Lineage, Link, Source, StoredDoc};

use super::common::EXIT_OK;
use super::output;

/// Output formats of `show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A readable conversation.
    Text,
    /// One JSON object per document, in file order.
    Json,
    /// MemPalace's transcript, byte for byte: `> ` before each user
    /// message (its first line), the reply on the next line, an empty line
    /// after each turn.
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

    /// Read the session from the team's PostgreSQL database (see `push`)
    /// instead of the local index; the JSON adds each message's `host`.
    /// `--db` alone (last, or before another flag) reads the URL from
    /// $PI_INDEX_DATABASE_URL.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    pub db: Option<String>,

    /// With --db: the host whose session it is, when several pushed one
    /// of that id or path.
    #[arg(long, value_name = "NAME", requires = "db")]
    pub host: Option<String>,
}

/// The transcript MemPalace 3.11.0 files for these messages, byte for
/// byte (its `normalize._messages_to_transcript`, which its Pi importer
/// feeds with every user and assistant message in file order): a user
/// message is `> ` and its text (only its first line is marked, as
/// MemPalace's exchange chunking expects), the assistant message right
/// after it, if any, follows on the next line; an assistant message
/// without a question stands alone; every turn is followed by an empty
/// line, and the lines are joined with `\n` (so the text ends with one).
/// Other roles take no part.
pub fn transcript(docs: &[StoredDoc]) -> String {
    use pi_index::pi::Role;
    let turns: Vec<_> = docs
        .iter()
        .filter(|d| matches!(d.role, Role::User | Role::Assistant))
        .collect();
    let mut lines: Vec<String> = Vec::new();
    let mut i = 0;
    while i < turns.len() {
        let d = turns[i];
        i += 1;
        if d.role == Role::User {
            lines.push(format!("> {}", d.text));
            if let Some(reply) = turns.get(i).filter(|r| r.role == Role::Assistant) {
                lines.push(reply.text.clone());
                i += 1;
            }
        } else {
            lines.push(d.text.clone());
        }
        lines.push(String::new());
    }
    lines.join("\n")
}

/// How people are told what a `context_edit` did to a message.
pub fn edited_mark(edited: Edited) -> Option<&'static str> {
    match edited {
        Edited::No => None,
        Edited::Omitted => Some("[omitted from the model's context]"),
        Edited::Replaced => Some("[replaced in the model's context]"),
    }
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
    let source = pi_index::read::open(args.db.as_deref(), index_dir)?;
    // The local index stores paths as `build` found them, lossily where
    // they are not UTF-8: an existing file is named the same way.
    let arg = Path::new(&args.session);
    let arg = match std::fs::canonicalize(arg) {
        Ok(path) if path.is_file() && source.capabilities().files => {
            path.to_string_lossy().into_owned()
        }
        _ => arg.to_string_lossy().into_owned(),
    };
    let docs = source.show(&arg, args.host.as_deref())?;
    print(&args, docs, source.as_ref())
}

/// Print a session's documents as `args` asks, its family read from
/// `source` for the header.
fn print(
    args: &ShowArgs,
    mut docs: Vec<StoredDoc>,
    source: &dyn Source,
) -> anyhow::Result<std::process::ExitCode> {
    if let Some(line) = args.around {
        // Around a line: context on both sides, whatever its branch, so a
        // hit on an abandoned branch can be seen where it was said.
        let window = pi_index::search::around::around(&docs, line, args.context)?;
        docs = docs[window].to_vec();
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
        Format::Transcript => out.write_all(transcript(&docs).as_bytes())?,
        Format::Text => {
            if let Some(first) = docs.first() {
                let title = first.session_name.as_deref().unwrap_or("(unnamed session)");
                writeln!(out, "# {title}")?;
                writeln!(
                    out,
                    "session {}  cwd {}",
                    OneLine(&first.session_id),
                    OneLine(first.cwd.as_deref().unwrap_or("?"))
                )?;
                writeln!(out, "file {}", OneLine(&first.path))?;
                if let Some((lineage, at)) = source.family(first.host.as_deref(), &first.path)? {
                    family_header(&mut out, &lineage, at.as_deref())?;
                }
                if let Some(h) = &first.host {
                    writeln!(out, "host {h}")?;
                }
            }
            for d in &docs {
                let branch = if d.active { "" } else { " (abandoned branch)" };
                let edited = edited_mark(d.edited).map_or(String::new(), |m| format!(" {m}"));
                writeln!(
                    out,
                    "\n[{}] {} line {}{}{}",
                    d.role,
                    d.timestamp.as_deref().unwrap_or("-"),
                    d.line,
                    branch,
                    edited
                )?;
                writeln!(out, "{}", d.text)?;
                if let Some(r) = &d.replacement {
                    writeln!(out, "[sent to the model instead]\n{r}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The family lines of `show`'s header: "forked from X at entry Y" (`at`:
/// the session's last entry its parent holds too) and the session's
/// forks.
fn family_header(out: &mut impl Write, lineage: &Lineage, at: Option<&str>) -> anyhow::Result<()> {
    if let Some(p) = &lineage.parent {
        let how = match p.how {
            Link::Stated => "",
            Link::Inferred => " (inferred: it begins with the same entries)",
        };
        match &p.session {
            Some(id) => {
                let at = at.map_or(String::new(), |e| format!(" at entry {e}"));
                writeln!(
                    out,
                    "forked from {}{at}{how}  file {}",
                    OneLine(id),
                    OneLine(&p.path)
                )?;
            }
            None => writeln!(out, "forked from {} (not indexed){how}", OneLine(&p.path))?,
        }
    }
    if !lineage.forks.is_empty() {
        let ids: Vec<&str> = lineage.forks.iter().map(|f| f.session.as_str()).collect();
        let n = ids.len();
        let forks = if n == 1 { "fork" } else { "forks" };
        writeln!(out, "{n} {forks}: {}", ids.join(", "))?;
    }
    Ok(())
}
