//! Words quoted for a shell, so a command shown to a person pastes and
//! runs (the picker's, `search`'s and the web view's resume commands).

/// Quote a word for a shell command line, so that the command pastes and
/// runs: as is when it holds only characters no shell treats specially,
/// in single quotes otherwise, and as `$'…'` (bash, zsh, ksh) with `\xHH`
/// escapes when it holds control characters, which could not be pasted
/// (nor shown: the sanitizer would remove them). A word that starts with
/// `-` still reads as an option: callers put it after `--`.
pub fn shell_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:@+,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_owned();
    }
    if !s.chars().any(char::is_control) {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                for b in c.encode_utf8(&mut [0; 4]).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}
