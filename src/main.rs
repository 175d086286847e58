//! The `pi-index` command line: parse arguments, call the library, map
//! errors to exit codes (0 success, 1 nothing found, 2 error).

mod cli;

fn main() -> std::process::ExitCode {
    cli::run()
}
