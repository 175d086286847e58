//! What two indexes hold, document by document, and `pi-index check`:
//! for the tests that run builds at the same time and compare the result
//! with a fresh build of the same bytes.

use std::path::Path;

use super::{run, Scratch};

/// Every document the index of `s` holds of each of `files`, in file
/// order (`show --format json --branch all`), with the fields a fresh
/// build must give the same: a list per file.
pub fn documents(s: &Scratch, files: &[&Path]) -> Vec<Vec<serde_json::Value>> {
    files
        .iter()
        .map(|f| {
            s.show_json(f.to_str().unwrap(), &[])
                .into_iter()
                .map(|mut d| {
                    // The session's record is read at show time; the rest
                    // is the document's own.
                    let o = d.as_object_mut().unwrap();
                    o.retain(|k, _| {
                        matches!(
                            k.as_str(),
                            "line"
                                | "offset"
                                | "entry_id"
                                | "role"
                                | "timestamp"
                                | "model"
                                | "active"
                                | "edited"
                                | "replacement"
                                | "text"
                        )
                    });
                    d
                })
                .collect()
        })
        .collect()
}

/// The documents a fresh index of `roots` holds of `files`.
pub fn fresh_documents(roots: &[&Path], files: &[&Path]) -> Vec<Vec<serde_json::Value>> {
    let fresh = Scratch::new();
    fresh.build(roots, &[]);
    documents(&fresh, files)
}

/// `pi-index check ROOTS --json` on the index of `s`: its exit code and
/// report.
pub fn check(s: &Scratch, roots: &[&Path], extra: &[&str]) -> (i32, serde_json::Value) {
    let out = run(s
        .cmd()
        .arg("check")
        .args(roots)
        .arg("--index")
        .arg(s.index())
        .arg("--json")
        .args(extra));
    let code = out.status.code().expect("check exited");
    assert!(
        code == 0 || code == 1,
        "check failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        code,
        serde_json::from_slice(&out.stdout).expect("check --json"),
    )
}
