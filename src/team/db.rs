//! One connection to the team database ([`Db`]), the URL it is made from
//! (as libpq reads it: `sslmode`, `~/.pgpass`, the `PG*` variables), and
//! the errors of the team database, each saying what to do.

use std::future::Future;

use super::tls::{self, Verify};
use std::path::PathBuf;

/// The environment variable that holds the database URL when none is
/// given on the command line.
pub const URL_VAR: &str = "PI_INDEX_DATABASE_URL";

/// Errors of the team database, each saying what to do.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    /// The URL cannot be read.
    #[error("cannot read the database URL ({0}): write it as postgres://USER@HOST:PORT/DB?sslmode=require")]
    Url(String),
    /// No URL was given.
    #[error(
        "no database given: pass a URL (postgres://USER@HOST:PORT/DB) or set PI_INDEX_DATABASE_URL"
    )]
    NoUrl,
    /// TLS could not be set up (a root certificate that cannot be read).
    #[error("TLS for {target}: {why}")]
    Tls {
        /// The server, without the password.
        target: String,
        /// What went wrong.
        why: String,
    },
    /// The server could not be reached or refused the connection.
    #[error("cannot connect to the database at {target}: {why}")]
    Connect {
        /// The server, without the password.
        target: String,
        /// What the server or the network said, and what to do.
        why: String,
    },
    /// A statement failed, or the connection was lost on the way.
    #[error("the database at {target}, {doing}: {why}")]
    Db {
        /// The server, without the password.
        target: String,
        /// What pi-index was doing.
        doing: String,
        /// What the server said, and what to do.
        why: String,
    },
    /// The database holds a schema newer than this pi-index knows.
    #[error("the database at {target} holds pi-index tables of schema version {found}, newer than this pi-index's ({ours}): upgrade pi-index to push or search there")]
    NewerSchema {
        /// The server.
        target: String,
        /// The version found.
        found: i32,
        /// Ours.
        ours: i32,
    },
    /// The database has no pi-index tables (a search before any push).
    #[error("the database at {0} holds no pi-index tables yet: run `pi-index push` first")]
    NoTables(String),
    /// The server is a read-only replica.
    #[error("the database at {target} is a read-only replica (a standby in recovery): push to the primary instead{primary}")]
    Replica {
        /// The server.
        target: String,
        /// `" (this standby follows …)"` when the server says which
        /// primary it follows.
        primary: String,
    },
    /// The local index failed.
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    /// The query cannot be run.
    #[error(transparent)]
    Query(#[from] crate::search::query::QueryError),
    /// The query is longer than a search may be (the local limits:
    /// [`crate::search::query::limits`]).
    #[error(transparent)]
    TooLong(#[from] crate::search::query::TooLong),
    /// The page starts deeper than a search pages (the local limit:
    /// [`crate::search::query::MAX_OFFSET`]).
    #[error(transparent)]
    TooDeep(#[from] crate::search::query::TooDeep),
    /// A session lookup failed.
    #[error("{0}")]
    Lookup(String),
}

/// One connection to the team database, with the runtime that drives it.
pub struct Db {
    pub(super) rt: tokio::runtime::Runtime,
    /// The connection.
    pub client: tokio_postgres::Client,
    /// Where it goes, for messages: `user@host:port/db`, never the
    /// password.
    pub target: String,
}

/// A URL read into tokio-postgres's configuration plus what only libpq
/// knows (`sslmode=verify-ca|verify-full`, `sslrootcert`).
struct Url {
    config: tokio_postgres::Config,
    verify: Verify,
    root_cert: Option<PathBuf>,
}

fn parse_url(url: &str) -> Result<Url, TeamError> {
    let mut verify = Verify::No;
    let mut root_cert = None;
    let mut mode: Option<tokio_postgres::config::SslMode> = None;
    let mut take = |key: &str, value: &str| -> Result<bool, TeamError> {
        match key {
            "sslmode" => {
                use tokio_postgres::config::SslMode;
                let (m, v) = match value {
                    "disable" => (SslMode::Disable, Verify::No),
                    "allow" | "prefer" => (SslMode::Prefer, Verify::No),
                    "require" => (SslMode::Require, Verify::No),
                    "verify-ca" => (SslMode::Require, Verify::Chain),
                    "verify-full" => (SslMode::Require, Verify::Full),
                    other => {
                        return Err(TeamError::Url(format!(
                        "sslmode={other}: use disable, prefer, require, verify-ca or verify-full"
                    )))
                    }
                };
                mode = Some(m);
                verify = v;
                Ok(true)
            }
            "sslrootcert" => {
                root_cert = Some(PathBuf::from(value));
                Ok(true)
            }
            _ => Ok(false),
        }
    };
    // The keys only libpq knows are taken out before tokio-postgres reads
    // the rest (it refuses keys it does not know).
    let rest = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        match url.split_once('?') {
            Some((base, query)) => {
                let mut kept = Vec::new();
                for pair in query.split('&').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                    if !take(k, &percent_decode(v))? {
                        kept.push(pair);
                    }
                }
                if kept.is_empty() {
                    base.to_owned()
                } else {
                    format!("{base}?{}", kept.join("&"))
                }
            }
            None => url.to_owned(),
        }
    } else {
        let mut kept = Vec::new();
        for pair in url.split_whitespace() {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if !take(k, v)? {
                kept.push(pair);
            }
        }
        kept.join(" ")
    };
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e: tokio_postgres::Error| TeamError::Url(e.to_string()))?;
    if let Some(m) = mode {
        config.ssl_mode(m);
    }
    if config.get_hosts().is_empty() {
        config.host(std::env::var("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_ports().is_empty() {
        if let Some(p) = std::env::var("PGPORT").ok().and_then(|p| p.parse().ok()) {
            config.port(p);
        }
    }
    if config.get_user().is_none() {
        config.user(default_user());
    }
    if config.get_dbname().is_none() {
        if let Ok(db) = std::env::var("PGDATABASE") {
            config.dbname(db);
        }
    }
    Ok(Url {
        config,
        verify,
        root_cert,
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The operating system's name of the user running pi-index (`$PGUSER`
/// first, as libpq does).
fn default_user() -> String {
    if let Ok(u) = std::env::var("PGUSER") {
        if !u.is_empty() {
            return u;
        }
    }
    os_user().unwrap_or_else(|| "postgres".into())
}

fn os_user() -> Option<String> {
    if let Ok(u) = std::env::var("USER") {
        if !u.is_empty() {
            return Some(u);
        }
    }
    os_account()
}

/// The name of the account this process runs as, from the password
/// database.
#[cfg(unix)]
fn os_account() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage or null; the
    // name is copied out at once, on this thread.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() {
            return None;
        }
        let name = std::ffi::CStr::from_ptr((*pw).pw_name);
        Some(name.to_string_lossy().into_owned())
    }
}

/// The name of the account this process runs as: no password database
/// here, and Windows names the user in USERNAME.
#[cfg(not(unix))]
fn os_account() -> Option<String> {
    std::env::var("USERNAME").ok().filter(|u| !u.is_empty())
}

/// This machine's name, if the system tells it.
#[cfg(unix)]
fn os_host() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// This machine's name: Windows names it in COMPUTERNAME.
#[cfg(not(unix))]
fn os_host() -> Option<String> {
    std::env::var("COMPUTERNAME").ok().filter(|h| !h.is_empty())
}

/// The default host name for `push --as`: `user@hostname`.
pub fn default_host_name() -> String {
    let user = os_user().unwrap_or_else(|| "user".into());
    let host = os_host().unwrap_or_else(|| "localhost".into());
    format!("{user}@{host}")
}

fn target_of(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{}@{host}:{port}/{}",
        config.get_user().unwrap_or("?"),
        config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
    )
}

/// The password for `config` from `~/.pgpass` (or `$PGPASSFILE`), as
/// libpq reads it: `host:port:database:user:password`, `*` matching
/// anything, `\` escaping `:` and `\`.
fn pgpass(config: &tokio_postgres::Config) -> Option<String> {
    use tokio_postgres::config::Host;
    let file = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or("");
    let db = config.get_dbname().unwrap_or(user);
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::new();
        let mut cur = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => cur.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        fields.push(cur);
        if fields.len() != 5 {
            continue;
        }
        let ok = |pat: &str, v: &str| pat == "*" || pat == v;
        if ok(&fields[0], &host)
            && ok(&fields[1], &port)
            && ok(&fields[2], db)
            && ok(&fields[3], user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

impl Db {
    /// Connect to the database at `url` (a `postgres://` URL or libpq's
    /// `key=value` form). The password comes from the URL, else
    /// `PGPASSWORD`, else `~/.pgpass`, and is never printed.
    pub fn connect(url: &str) -> Result<Db, TeamError> {
        let Url {
            mut config,
            verify,
            root_cert,
        } = parse_url(url)?;
        if config.get_password().is_none() {
            match std::env::var("PGPASSWORD") {
                Ok(p) if !p.is_empty() => {
                    config.password(p);
                }
                _ => {
                    if let Some(p) = pgpass(&config) {
                        config.password(p);
                    }
                }
            }
        }
        config.application_name("pi-index");
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        let target = target_of(&config);
        let tls = tls::connector(verify, root_cert).map_err(|why| TeamError::Tls {
            target: target.clone(),
            why,
        })?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TeamError::Connect {
                target: target.clone(),
                why: format!("cannot start the network runtime ({e})"),
            })?;
        let (client, connection) =
            rt.block_on(config.connect(tls))
                .map_err(|e| TeamError::Connect {
                    target: target.clone(),
                    why: connect_advice(&e),
                })?;
        // The connection's own task: it reads and writes the socket while
        // a statement runs (`block_on` drives it).
        rt.spawn(async move {
            let _ = connection.await;
        });
        Ok(Db { rt, client, target })
    }

    /// Run `f` to completion on this connection's runtime.
    pub fn run<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// The error for `e`, met while `doing` something.
    pub fn error(&self, doing: &str, e: &tokio_postgres::Error) -> TeamError {
        TeamError::Db {
            target: self.target.clone(),
            doing: doing.to_owned(),
            why: advice(e),
        }
    }
}

/// What the server said, or what happened to the connection, and what to
/// do about it.
pub fn advice(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        use tokio_postgres::error::SqlState;
        let code = db.code();
        let what = if *code == SqlState::INSUFFICIENT_PRIVILEGE {
            ": this role may not do that (see docs/team.md, \"Least privilege\", for the roles that push and read)"
        } else if code.code().starts_with("57P") {
            ": the server is shutting down or restarting; try again when it is back"
        } else {
            ""
        };
        return format!("{}{what}", db.message());
    }
    if e.is_closed() {
        return "the connection was lost (the server stopped or the network was cut): nothing of the unfinished transaction was kept; try again when the server is back".into();
    }
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(cause) = src {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        src = cause.source();
    }
    if s.contains("connection closed")
        || s.contains("Connection reset")
        || s.contains("Broken pipe")
        || s.contains("unexpected EOF")
    {
        return format!("{s}: the connection was lost (the server stopped or the network was cut): nothing of the unfinished transaction was kept; try again when the server is back");
    }
    s
}

fn connect_advice(e: &tokio_postgres::Error) -> String {
    let s = advice(e);
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        if code == "28P01" || code == "28000" {
            return format!(
                "{s}: check the user and the password (in the URL, PGPASSWORD or ~/.pgpass)"
            );
        }
        if code == "3D000" {
            return format!("{s}: create it (createdb) or name another database in the URL");
        }
        return s;
    }
    if s.contains("Connection refused") {
        return format!("{s}: is the server running there, and are the host and port right?");
    }
    if s.contains("timed out") || s.contains("timeout") {
        return format!("{s}: the server did not answer: check the host, the port and the network");
    }
    // What rustls says of a certificate that sslmode=verify-ca or
    // verify-full refuses (src/team/tls.rs).
    if s.contains("UnknownIssuer") {
        return format!("{s}: no root given signed the server's certificate: name its CA with sslrootcert (else ~/.postgresql/root.crt, else the system's roots are used), or use sslmode=require to encrypt without checking it");
    }
    if s.contains("not valid for name") {
        return format!("{s}: connect by a name the certificate holds in its subjectAltName (its CN is not read), or use sslmode=verify-ca to check its chain only");
    }
    if s.contains("CaUsedAsEndEntity") {
        return format!("{s}: the server's certificate is a CA's (self-signed, as `openssl req -x509` makes it): give the server a certificate signed by a CA and that CA to sslrootcert, or use sslmode=require to encrypt without checking it");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_s_own_keys_are_taken_out_of_the_url() {
        let u = parse_url(
            "postgres://a@h:6000/d?sslmode=verify-full&sslrootcert=/r.pem&connect_timeout=3",
        )
        .unwrap();
        assert!(u.verify == Verify::Full);
        assert_eq!(u.root_cert.as_deref(), Some(std::path::Path::new("/r.pem")));
        assert_eq!(
            u.config.get_connect_timeout(),
            Some(&std::time::Duration::from_secs(3))
        );
        assert_eq!(target_of(&u.config), "a@h:6000/d");
        let u = parse_url("host=h port=1 user=b sslmode=verify-ca").unwrap();
        assert!(u.verify == Verify::Chain);
        assert_eq!(target_of(&u.config), "b@h:1/b");
        assert!(matches!(
            parse_url("postgres://h/d?sslmode=maybe"),
            Err(TeamError::Url(_))
        ));
    }

    #[test]
    fn the_target_never_holds_the_password() {
        let u = parse_url("postgres://a:s3cret@h/d").unwrap();
        assert!(!target_of(&u.config).contains("s3cret"));
    }
}
