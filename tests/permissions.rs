//! Permission errors, through the real binary. Root reads everything, so
//! when the tests run as root (as on CI) the binary is started as `nobody`
//! with `setpriv`. Where that cannot be done the test says why; under CI
//! (`CI` set, as `.ci/run` does) it fails instead, so it never passes
//! there without having run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::util::as_nobody;

#[test]
fn unreadable_files_and_directories_are_reported_and_skipped() {
    let Some(mut cmd) = as_nobody(env!("CARGO_BIN_EXE_pi-index")) else {
        let why =
            "cannot run the binary as an unprivileged user here (root without a working `setpriv`)";
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("skipped: {why}");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
    let sessions = dir.path().join("sessions");
    let locked_dir = sessions.join("--locked--");
    fs::create_dir_all(&locked_dir).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sessions");
    for (from, to) in [
        ("branch-abandoned.jsonl", sessions.join("readable.jsonl")),
        ("utf8-bom.jsonl", sessions.join("unreadable.jsonl")),
        ("crlf-line-endings.jsonl", locked_dir.join("inside.jsonl")),
    ] {
        fs::copy(fixtures.join(from), &to).unwrap();
        fs::set_permissions(&to, fs::Permissions::from_mode(0o644)).unwrap();
    }
    fs::set_permissions(&sessions, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(
        sessions.join("unreadable.jsonl"),
        fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    fs::set_permissions(&locked_dir, fs::Permissions::from_mode(0o000)).unwrap();

    let index = dir.path().join("index");
    let out = cmd
        .arg("build")
        .arg(&sessions)
        .arg("--index")
        .arg(&index)
        .arg("--json")
        .env("HOME", dir.path())
        .env_remove("PI_INDEX_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["files_indexed"], 1, "{r}");
    let errors = r["errors"].as_array().unwrap();
    let paths: Vec<&str> = errors.iter().map(|e| e["path"].as_str().unwrap()).collect();
    assert!(paths.iter().any(|p| p.ends_with("unreadable.jsonl")), "{r}");
    assert!(paths.iter().any(|p| p.ends_with("--locked--")), "{r}");
    assert!(
        errors
            .iter()
            .all(|e| e["reason"].as_str().unwrap().contains("ermission")),
        "{r}"
    );
    assert!(stderr.contains("unreadable.jsonl"), "{stderr}");
    fs::set_permissions(&locked_dir, fs::Permissions::from_mode(0o755)).unwrap();
}
