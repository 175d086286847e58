//! What every command shares: the exit codes, where the index is, and a
//! word said on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output;

/// Exit code for success.
pub const EXIT_OK: ExitCode = ExitCode::SUCCESS;
/// Exit code for "nothing found" (search, like grep).
pub const EXIT_NOTHING: ExitCode = ExitCode::FAILURE;
/// Exit code for a usage or I/O error.
pub fn exit_error() -> ExitCode {
    ExitCode::from(2)
}

/// Say `what` on stderr, after `pi-index: `.
pub fn said(what: &str) {
    let _ = writeln!(output::stderr(), "pi-index: {what}");
}

/// Where the index lives: `--index`, else `$PI_INDEX_DIR`, else the
/// platform's data directory.
pub fn index_dir(flag: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = flag {
        return Ok(p.to_owned());
    }
    if let Some(p) = std::env::var_os("PI_INDEX_DIR").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "pi-index")
        .map(|d| d.data_dir().to_owned())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "cannot find a home directory for the index: pass --index DIR or set PI_INDEX_DIR"
            )
        })
}
