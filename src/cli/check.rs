//! `pi-index check`: compare the index with the session files, and with
//! `--repair` mend what differs, incrementally.

use pi_index::output::OneLine;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use pi_index::pi::Kinds;
use pi_index::pipeline::{check, repair, BuildOptions, CheckReport};

use super::build::{sources, Sources};
use super::common::{EXIT_NOTHING, EXIT_OK};
use super::output;

/// Arguments of `pi-index check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The session files or directories the index was built from (as for
    /// `build`; default: Pi's session directories).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Mend what differs: read the files with defects again and remove
    /// documents without a session, in one incremental build (the rest of
    /// the index is kept), then check again.
    #[arg(long)]
    pub repair: bool,

    /// Print one JSON object with what was found on stdout.
    #[arg(long)]
    pub json: bool,

    /// Print nothing but errors (the exit code says what was found).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Run `check`: exit 0 when the index holds exactly what the files give
/// (after `--repair`, when it does now), 1 when it does not, 2 on error.
pub fn run(args: CheckArgs, index_dir: &Path) -> anyhow::Result<ExitCode> {
    let Sources {
        roots, locations, ..
    } = sources(&args.paths)?;
    let mut found = check(index_dir, &roots)?;
    if args.repair && !found.is_clean() {
        let kinds = pi_index::index::PiIndex::open(index_dir)?
            .build_info()?
            .and_then(|i| Kinds::parse(&i.kinds).ok())
            .unwrap_or_default();
        let opts = BuildOptions::new(roots.clone(), index_dir.to_owned())
            .kinds(kinds)
            .locations(locations);
        let mended = found.defective_paths.len() as u64 + u64::from(!found.orphan_keys.is_empty());
        repair(&opts, &found, &|_| {})?;
        let before = found;
        found = check(index_dir, &roots)?;
        found.repaired = mended;
        if !args.quiet && !args.json {
            let mut err = output::stderr();
            writeln!(err, "pi-index: repaired: {}", describe(&before))?;
        }
    }
    if args.json {
        let mut out = output::json_stdout();
        out.line(&found)?;
        out.flush()?;
    } else if !args.quiet {
        let mut out = output::stdout(false);
        for d in &found.defects {
            let mut what = Vec::new();
            for (n, word) in [
                (d.doubled, "doubled"),
                (d.missing, "missing"),
                (d.stale, "stale"),
            ] {
                if n > 0 {
                    what.push(format!("{n} {word}"));
                }
            }
            if let Some(r) = &d.record {
                what.push(r.clone());
            }
            writeln!(out, "{}: {}", OneLine(&d.path), what.join(", "))?;
        }
        if found.defects_more > 0 {
            writeln!(out, "… and {} more files with defects", found.defects_more)?;
        }
        if found.is_clean() {
            writeln!(
                out,
                "index consistent: {} files, {} documents, as a fresh build of the same bytes{}",
                found.files_checked,
                found.documents,
                out_of_date(&found)
            )?;
        } else {
            writeln!(
                out,
                "index differs from the files: {}{}; `pi-index check --repair` mends it",
                describe(&found),
                out_of_date(&found)
            )?;
        }
        out.flush()?;
    }
    Ok(if found.is_clean() {
        EXIT_OK
    } else {
        EXIT_NOTHING
    })
}

/// `3 doubled, 1 missing, ...`: the defects counted.
fn describe(r: &CheckReport) -> String {
    let mut parts = Vec::new();
    for (n, word) in [
        (r.doubled, "documents doubled"),
        (r.missing, "documents missing"),
        (r.stale, "documents stale"),
        (r.orphans, "documents without a session"),
        (r.records, "session records wrong"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(", ")
    }
}

fn out_of_date(r: &CheckReport) -> String {
    match r.out_of_date {
        0 => String::new(),
        n => format!(" ({n} files changed since the last build: `pi-index build` reads them)"),
    }
}
