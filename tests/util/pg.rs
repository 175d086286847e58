//! Private PostgreSQL clusters for the team tests: `initdb` and `pg_ctl`
//! on a loopback port, run as the unprivileged user `nobody` when the
//! tests run as root (PostgreSQL refuses root), with a data directory it
//! owns; a replica by `pg_basebackup -R`. Each server is stopped by its
//! pid: when its `Cluster` is dropped, and, for the one a test module
//! shares, by a small watcher process once the test binary has exited.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where PostgreSQL's server programs are: Debian's versioned directory
/// (newest first), else the PATH.
pub fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("initdb").exists() && d.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    if let Some(d) = dirs.pop() {
        return Some(d);
    }
    let out = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.parent()
        .filter(|_| out.status.success())
        .map(Path::to_owned)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `bin` run as the server's user.
fn as_owner(bin: &Path) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        c
    } else {
        Command::new(bin)
    }
}

/// The root certificates of [`Cluster::enable_tls`].
pub struct Tls {
    /// The CA that signed the server's certificate.
    pub root: PathBuf,
    /// A CA that signed nothing the server has.
    pub stranger: PathBuf,
}

/// Run the `openssl` program with the arguments `args` gives it; whether
/// it could and succeeded.
fn openssl(args: impl FnOnce(&mut Command) -> &mut Command) -> bool {
    args(&mut Command::new("openssl"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A self-signed CA, `STEM.crt` with its key `STEM.key`; whether made.
fn make_ca(stem: &Path, name: &str) -> bool {
    openssl(|c| {
        c.args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .arg("-subj")
        .arg(format!("/CN={name}"))
        .args(["-addext", "basicConstraints=critical,CA:TRUE"])
        .args([
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
            "-keyout",
        ])
        .arg(stem.with_extension("key"))
        .arg("-out")
        .arg(stem.with_extension("crt"))
    })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running server.
pub struct Cluster {
    /// Holds the data directory (and the replica's).
    pub dir: tempfile::TempDir,
    pub data: PathBuf,
    pub port: u16,
    pub bin: PathBuf,
    /// Stop the server when dropped.
    pub owned: bool,
}

fn run_ok(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Cluster {
    /// A new cluster, started; `None` (after saying why, or failing under
    /// CI) when PostgreSQL is not installed or cannot run here.
    pub fn start() -> Option<Cluster> {
        let Some(bin) = bin_dir() else {
            super::cannot_run(
                "PostgreSQL is not installed (no initdb): `apt-get install postgresql-15` (.ci/run does)",
            );
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("pi-index-pg")
            .tempdir_in("/tmp")
            .unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let ok = Command::new("chown")
                .args(["65534:65534"])
                .arg(&data)
                .status()
                .is_ok_and(|s| s.success());
            let probe = as_owner(&bin.join("initdb")).arg("--version").output();
            if !ok || !probe.is_ok_and(|o| o.status.success()) {
                super::cannot_run("cannot run PostgreSQL as the unprivileged user nobody here");
                return None;
            }
        }
        run_ok(
            as_owner(&bin.join("initdb"))
                .args([
                    "-A",
                    "trust",
                    "-U",
                    "postgres",
                    "--no-sync",
                    "-E",
                    "UTF8",
                    "--locale=C",
                    "-D",
                ])
                .arg(&data)
                .env("HOME", dir.path())
                .stdout(Stdio::null()),
            "initdb",
        );
        let c = Cluster {
            dir,
            data,
            port: free_port(),
            bin,
            owned: true,
        };
        c.pg_start(&c.data, c.port);
        Some(c)
    }

    fn pg_start(&self, data: &Path, port: u16) {
        let log = data.join("server.log");
        run_ok(
            as_owner(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(data)
                .arg("-l")
                .arg(&log)
                .arg("-o")
                .arg(format!(
                    "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories='' -c fsync=off -c max_wal_senders=4 -c wal_level=replica"
                ))
                .args(["-w", "-t", "60", "start"])
                .env("HOME", self.dir.path())
                .stdout(Stdio::null()),
            "pg_ctl start",
        );
    }

    /// Start this cluster again after [`Cluster::stop`].
    pub fn restart(&self) {
        self.pg_start(&self.data, self.port);
    }

    /// The server's pid, from `postmaster.pid`.
    pub fn pid(&self) -> Option<i32> {
        pid_of(&self.data)
    }

    /// Stop the server by its pid (a fast shutdown), and wait until it is
    /// gone.
    pub fn stop(&self) {
        stop_pid(&self.data, libc::SIGINT);
    }

    /// The URL of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// The URL of database `db` as `user`.
    pub fn url_as(&self, user: &str, db: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{db}", self.port)
    }

    /// Run SQL as the superuser in `db`; returns psql's output (tuples
    /// only, unaligned).
    pub fn sql(&self, db: &str, sql: &str) -> String {
        self.sql_as("postgres", db, sql).expect("psql")
    }

    /// Run SQL as `user`: its output, or psql's error.
    pub fn sql_as(&self, user: &str, db: &str, sql: &str) -> Result<String, String> {
        // The server's own psql (Debian's /usr/bin/psql is a wrapper that
        // picks a version).
        let psql = self.bin.join("psql");
        let psql = if psql.exists() {
            psql
        } else {
            PathBuf::from("psql")
        };
        let out = Command::new(psql)
            .args([
                "-X",
                "-q",
                "-t",
                "-A",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
            ])
            .arg("-p")
            .arg(self.port.to_string())
            .args(["-U", user, "-d", db, "-c", sql])
            .output()
            .expect("psql");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// A fresh database.
    pub fn create_db(&self, name: &str) -> String {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    /// A streaming replica of this cluster (`pg_basebackup -R`), started.
    pub fn replica(&self) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("pi-index-pg-replica")
            .tempdir_in("/tmp")
            .unwrap();
        let data = dir.path().join("data");
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        run_ok(
            as_owner(&self.bin.join("pg_basebackup"))
                .args([
                    "-h",
                    "127.0.0.1",
                    "-U",
                    "postgres",
                    "-R",
                    "-X",
                    "stream",
                    "-c",
                    "fast",
                    "-p",
                ])
                .arg(self.port.to_string())
                .arg("-D")
                .arg(&data)
                .env("HOME", dir.path()),
            "pg_basebackup",
        );
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let r = Cluster {
            dir,
            data,
            port: free_port(),
            bin: self.bin.clone(),
            owned: true,
        };
        r.pg_start(&r.data, r.port);
        r
    }

    /// Turn TLS on as a real server has it: a certificate for `localhost`
    /// (and no IP address, so that `verify-full` to 127.0.0.1 fails its
    /// host check), signed by a CA of the test's own; returns that CA's
    /// certificate, for `sslrootcert`, and another CA's, which signed
    /// nothing the server has. `None` (said, a failure under CI) without
    /// the `openssl` program.
    pub fn enable_tls(&self) -> Option<Tls> {
        let dir = self.dir.path();
        let key = self.data.join("server.key");
        let cert = self.data.join("server.crt");
        let csr = dir.join("server.csr");
        let ext = dir.join("server.ext");
        // rustls (webpki) takes a certificate for the server's name, not a
        // CA's used as the server's own.
        std::fs::write(
            &ext,
            "subjectAltName=DNS:localhost\n\
             basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature,keyEncipherment\n\
             extendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        let made = make_ca(&dir.join("root"), "pi-index test CA")
            && make_ca(&dir.join("stranger"), "pi-index stranger CA")
            && openssl(|c| {
                c.args(["req", "-new", "-newkey", "rsa:2048", "-nodes"])
                    .args(["-subj", "/CN=localhost", "-keyout"])
                    .arg(&key)
                    .arg("-out")
                    .arg(&csr)
            })
            && openssl(|c| {
                c.args(["x509", "-req", "-days", "2", "-in"])
                    .arg(&csr)
                    .arg("-CA")
                    .arg(dir.join("root.crt"))
                    .arg("-CAkey")
                    .arg(dir.join("root.key"))
                    .arg("-extfile")
                    .arg(&ext)
                    .arg("-out")
                    .arg(&cert)
            });
        if !made {
            super::cannot_run("cannot make the certificates (no openssl program)");
            return None;
        }
        self.own_tls_files();
        self.sql("postgres", "ALTER SYSTEM SET ssl = on");
        self.sql("postgres", "SELECT pg_reload_conf()");
        eventually(30, || {
            (self.sql("postgres", "SHOW ssl") == "on").then_some(())
        });
        Some(Tls {
            root: dir.join("root.crt"),
            stranger: dir.join("stranger.crt"),
        })
    }

    /// Replace the server's certificate by a self-signed one for
    /// `localhost` that says it is a CA (as `openssl req -x509` makes it,
    /// PostgreSQL's quickest setup) and reload; returns it, for
    /// `sslrootcert`. After [`Cluster::enable_tls`].
    pub fn self_signed_tls(&self) -> PathBuf {
        let key = self.data.join("server.key");
        let cert = self.data.join("server.crt");
        assert!(
            openssl(|c| {
                c.args([
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                ])
                .args(["-subj", "/CN=localhost"])
                .args(["-addext", "subjectAltName=DNS:localhost", "-keyout"])
                .arg(&key)
                .arg("-out")
                .arg(&cert)
            }),
            "openssl req -x509"
        );
        self.own_tls_files();
        self.sql("postgres", "SELECT pg_reload_conf()");
        let copy = self.dir.path().join("self-signed.crt");
        std::fs::copy(&cert, &copy).unwrap();
        copy
    }

    /// The server's key and certificate, the server's to read.
    fn own_tls_files(&self) {
        use std::os::unix::fs::PermissionsExt;
        let key = self.data.join("server.key");
        let cert = self.data.join("server.crt");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&cert, std::fs::Permissions::from_mode(0o644)).unwrap();
        if is_root() {
            run_ok(
                Command::new("chown")
                    .arg("65534:65534")
                    .arg(&key)
                    .arg(&cert),
                "chown",
            );
        }
    }

    /// Put `line` first in `pg_hba.conf` and reload.
    pub fn hba_first(&self, line: &str) {
        let hba = self.data.join("pg_hba.conf");
        let old = std::fs::read_to_string(&hba).unwrap();
        std::fs::write(&hba, format!("{line}\n{old}")).unwrap();
        self.sql("postgres", "SELECT pg_reload_conf()");
    }

    /// Stop the server once the process `pid` (the test binary) has
    /// exited: for a cluster shared by a module's tests, which no drop
    /// ever stops.
    pub fn stop_after(&self, pid: u32) {
        let Some(server) = self.pid() else { return };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; kill -INT {server}; \
             sleep 5; kill -QUIT {server} 2>/dev/null; rm -rf '{}'",
            self.dir.path().display()
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }
}

fn pid_of(data: &Path) -> Option<i32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

fn stop_pid(data: &Path, signal: i32) {
    let Some(pid) = pid_of(data) else { return };
    // SAFETY: a plain signal to the server process this test started.
    unsafe {
        libc::kill(pid, signal);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The pid file goes last, once the server is gone.
    while data.join("postmaster.pid").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` runs (a zombie nobody reaped does not).
pub fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(true)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned {
            stop_pid(&self.data, libc::SIGQUIT);
        }
    }
}

/// Poll `f` until it returns `Some`, for at most `secs` seconds.
pub fn eventually<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "not within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `pi-index push URL --as HOST --json` of `s`'s index.
pub fn push(s: &super::Scratch, url: &str, host: &str) -> Output {
    super::run(
        s.cmd()
            .args(["push", url, "--as", host, "--json", "--index"])
            .arg(s.index()),
    )
}

/// The same, which must succeed: its report.
/// Push `s`'s index as `host` into the new database `name` of `c` with the
/// pair words of the database `like`: what one uninterrupted push from
/// scratch gives (a team's pair words are chosen once, by its first push,
/// so a push into an empty database would choose its own). Returns its
/// URL.
pub fn fresh_like(c: &Cluster, s: &super::Scratch, name: &str, host: &str, like: &str) -> String {
    let url = c.create_db(name);
    // The tables (a push of an empty index chooses no words), the words,
    // then the push.
    let empty = super::Scratch::new();
    let none = empty.dir.path().join("none");
    std::fs::create_dir_all(&none).unwrap();
    empty.build(&[&none], &[]);
    push_ok(&empty, &url, host);
    let words = c.sql(
        like,
        "SELECT string_agg(quote_literal(term), '),(') FROM pi_pair_words",
    );
    if !words.is_empty() {
        c.sql(name, &format!("INSERT INTO pi_pair_words VALUES ({words})"));
    }
    push_ok(s, &url, host);
    url
}

pub fn push_ok(s: &super::Scratch, url: &str, host: &str) -> serde_json::Value {
    let out = push(s, url, host);
    assert!(
        out.status.success(),
        "push failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Everything the database holds, in a stable order, without the
/// numbers it gave sessions (`sid`): what two pushes of the same index
/// must agree on.
pub fn dump(c: &Cluster, db: &str) -> String {
    c.sql(
        db,
        "SELECT string_agg(r, E'\\n' ORDER BY r) FROM (\
         SELECT concat_ws('|', 's', host, path, session_id, cwd, session_name, name_tsv::text, title, \
         models::text, started_ms, last_ms, messages, file_size, indexed_to, head_hash, tail_hash, \
         pushed_schema, title_tsv::text, parent_session, parent_path, parent_how, fork_ids::text, \
         fork_paths::text, family, family_age, agent, coalesce(encode(usage, 'hex'), 'NULL')) AS r \
         FROM pi_sessions \
         UNION ALL SELECT concat_ws('|', 'm', m.host, s.path, m.ord, m.line, m.off, m.entry_id, m.role, \
         m.ts_ms, m.model, m.active, m.edited, m.replacement, m.text, m.windowed, m.tsv::text, m.rank_len, m.copy) \
         FROM pi_messages m JOIN pi_sessions s USING (host, sid) \
         UNION ALL SELECT concat_ws('|', 'w', w.host, s.path, w.ord, w.win, w.tsv::text, w.rank_len) \
         FROM pi_windows w JOIN pi_sessions s USING (host, sid) \
         UNION ALL SELECT concat_ws('|', 'h', host, kinds) FROM pi_hosts \
         UNION ALL SELECT concat_ws('|', 't', host, term, docs) FROM pi_terms \
         UNION ALL SELECT concat_ws('|', 'p', term) FROM pi_pair_words) AS t",
    )
}
