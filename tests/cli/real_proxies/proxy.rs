//! The real proxies, each started from the repository's sample with its addresses rewritten
//! into a temporary copy (a port of the system's choosing on 127.0.0.1, the dependency's
//! port), in the foreground, its output captured, stopped by SIGTERM to its own process id;
//! and what each logs about a request, read back by the request's id.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Which proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HAProxy, from scenarios/imports/haproxy.cfg.
    Haproxy,
    /// nginx, from scenarios/imports/nginx.conf.
    Nginx,
}

impl Kind {
    /// The executable, found on PATH or in /usr/sbin (where Debian installs both).
    pub fn binary(self) -> PathBuf {
        let name = match self {
            Kind::Haproxy => "haproxy",
            Kind::Nginx => "nginx",
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!("{name} is not installed (apt-get install {name}); the real-proxy check needs it")
            })
    }
}

/// What the proxy's own log says about one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// The status the proxy logged.
    pub status: u16,
    /// HAProxy: the termination state's first two characters (`--` for a normal end, `sQ` a
    /// queue timeout, `sH` a server timeout); nginx: `$upstream_status` (`-` when no
    /// upstream was asked).
    pub state: String,
    /// HAProxy: `%Tw`, the time in the queue (ms; -1 when it never left it); nginx: 0.
    pub queue_ms: i64,
    /// HAProxy: from leaving the queue to the end (`%Ta - %Tw - %Tc` with `%Tc` the connect
    /// time; -1 when unknown); nginx: `$upstream_response_time` in ms (-1 for `-`).
    pub server_ms: i64,
    /// HAProxy: `%Ta`, the whole request (ms); nginx: `$request_time` in ms.
    pub total_ms: i64,
}

/// A running proxy.
pub struct Proxy {
    /// Which one.
    pub kind: Kind,
    /// Its listening port on 127.0.0.1.
    pub port: u16,
    child: Child,
    out: Option<JoinHandle<Vec<String>>>,
    err: Option<JoinHandle<Vec<String>>>,
    dir: tempfile::TempDir,
}

/// A port on 127.0.0.1 free a moment ago (the system's choice, so parallel tests differ).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `text` with `from` replaced by `to`, which must be there (a changed sample fails here
/// rather than starting a proxy on its shipped ports).
fn rewrite(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the sample no longer contains {from:?}");
    text.replace(from, to)
}

/// Every line of `r`, read until it closes (bytes that are not UTF-8 replaced, so one odd
/// line cannot end the reading).
fn lines(r: impl std::io::Read + Send + 'static) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        BufReader::new(r).split(b'\n').map_while(Result::ok).map(|l| String::from_utf8_lossy(&l).into_owned()).collect()
    })
}

/// The nginx access-log format the check writes into its copy: what it needs to tell the
/// statuses apart, with separators that no field contains.
const NGINX_LOG: &str =
    "log_format realproxy '$request_uri|$status|$upstream_status|$request_time|$upstream_response_time';";

impl Proxy {
    /// Start `kind` from its sample in the repository's `scenarios/imports/`, in front of the
    /// dependency on 127.0.0.1:`dependency`, and wait (at most 10 s) until it accepts.
    pub fn start(kind: Kind, root: &Path, dependency: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let d = dir.path();
        let (config, mut cmd) = match kind {
            Kind::Haproxy => {
                let text = std::fs::read_to_string(root.join("scenarios/imports/haproxy.cfg")).unwrap();
                let text = rewrite(&text, "bind 127.0.0.1:8080", &format!("bind 127.0.0.1:{port}"));
                let text = rewrite(&text, "server app1 127.0.0.1:9000", &format!("server app1 127.0.0.1:{dependency}"));
                let cfg = d.join("haproxy.cfg");
                std::fs::write(&cfg, text).unwrap();
                let mut c = Command::new(kind.binary());
                // -db: foreground; the sample logs each request to stdout (`log stdout`).
                c.arg("-db").arg("-f").arg(&cfg);
                (cfg, c)
            }
            Kind::Nginx => {
                let text = std::fs::read_to_string(root.join("scenarios/imports/nginx.conf")).unwrap();
                let text = rewrite(&text, "listen 127.0.0.1:8081;", &format!("listen 127.0.0.1:{port};"));
                let text = rewrite(
                    &text,
                    "server 127.0.0.1:9000 max_conns=20;",
                    &format!("server 127.0.0.1:{dependency} max_conns=20;"),
                );
                let text = rewrite(&text, "pid /tmp/brownout-nginx.pid;", &format!("pid {}/nginx.pid;", d.display()));
                let temps: String = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
                    .iter()
                    .map(|t| format!("    {t}_temp_path {}/{t}_temp;\n", d.display()))
                    .collect();
                let log = format!("{NGINX_LOG}\n    access_log {}/access.log realproxy;\n{temps}", d.display());
                let text = rewrite(&text, "    access_log off;\n", &format!("    {log}"));
                let conf = d.join("nginx.conf");
                std::fs::write(&conf, text).unwrap();
                let mut c = Command::new(kind.binary());
                c.arg("-c").arg(&conf).arg("-p").arg(d).arg("-e").arg("stderr").arg("-g").arg("daemon off;");
                (conf, c)
            }
        };
        let mut child = cmd
            .current_dir(d)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {:?} with {}: {e}", kind, config.display()));
        let out = lines(child.stdout.take().unwrap());
        let err = lines(child.stderr.take().unwrap());
        let mut p = Proxy { kind, port, child, out: Some(out), err: Some(err), dir };
        let ready = Instant::now() + Duration::from_secs(10);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Ok(Some(status)) = p.child.try_wait() {
                let (_, err) = p.stop();
                panic!("{kind:?} exited at start ({status}):\n{}", err.join("\n"));
            }
            assert!(Instant::now() < ready, "{kind:?} did not listen on 127.0.0.1:{port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    /// Stop the proxy (SIGTERM to its process id, then at most 5 s before SIGKILL) and return
    /// its stdout and stderr lines.
    pub fn stop(&mut self) -> (Vec<String>, Vec<String>) {
        self.terminate();
        let out = self.out.take().map(|h| h.join().unwrap()).unwrap_or_default();
        let err = self.err.take().map(|h| h.join().unwrap()).unwrap_or_default();
        (out, err)
    }

    fn terminate(&mut self) {
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        // nginx's master stops its worker on SIGTERM; a SIGKILL would leave the worker behind.
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What the proxy logged per request id, after [`Proxy::stop`]: HAProxy's `option
    /// httplog` lines from `out`, nginx's access log from the temporary folder.
    pub fn logged(&self, out: &[String]) -> BTreeMap<u64, Logged> {
        match self.kind {
            Kind::Haproxy => out.iter().filter_map(|l| haproxy_line(l)).collect(),
            Kind::Nginx => std::fs::read_to_string(self.dir.path().join("access.log"))
                .unwrap_or_default()
                .lines()
                .filter_map(nginx_line)
                .collect(),
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// One HAProxy `option httplog` line (`log stdout format raw`):
/// `127.0.0.1:40000 [02/Dec/2026:03:50:01.123] web app/app1 0/0/0/102/102 200 121 - - ----
/// 3/3/0/0/0 0/0 "GET /r/17 HTTP/1.1"` (configuration manual, "8.2.3. HTTP log format":
/// timers `TR/Tw/Tc/Tr/Ta`, then status, bytes, two captured cookies, termination state).
pub fn haproxy_line(line: &str) -> Option<(u64, Logged)> {
    let id = line.split("\"GET /r/").nth(1)?.split_whitespace().next()?.parse().ok()?;
    let f: Vec<&str> = line.split_whitespace().collect();
    let t: Vec<i64> = f.get(4)?.split('/').map(|x| x.trim_start_matches('+').parse().unwrap_or(-1)).collect();
    let (tw, tc, ta) = (t[1], t[2], t[4]);
    let server_ms = if tw >= 0 && tc >= 0 { ta - tw - tc } else { -1 };
    let status = f.get(5)?.parse().ok()?;
    let state = f.get(9)?.chars().take(2).collect();
    Some((id, Logged { status, state, queue_ms: tw, server_ms, total_ms: ta }))
}

/// One line of the access log in [`NGINX_LOG`]'s format.
pub fn nginx_line(line: &str) -> Option<(u64, Logged)> {
    let f: Vec<&str> = line.split('|').collect();
    let id = f.first()?.strip_prefix("/r/")?.parse().ok()?;
    let secs = |s: &str| s.parse::<f64>().map(|x| (x * 1e3).round() as i64).unwrap_or(-1);
    Some((
        id,
        Logged {
            status: f.get(1)?.parse().ok()?,
            state: f.get(2)?.to_string(),
            queue_ms: 0,
            server_ms: secs(f.get(4)?),
            total_ms: secs(f.get(3)?),
        },
    ))
}
