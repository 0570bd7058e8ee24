//! The drifting HTTP dependency behind the proxy: HTTP/1.1 with keep-alive on 127.0.0.1, one
//! thread per connection, each request answered 200 after a latency drawn from the scenario's
//! model (log-normal, its median times the drift at the moment the request arrives).
//!
//! Each latency is a counter-based draw keyed by the request's id (`/r/<id>`), from the named
//! stream `realproxy/latency` of the trial's seed: the same request gets the same latency
//! whichever proxy forwards it and in whatever order requests arrive.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use brownout::engine::{Counter, label_hash};
use brownout::scenario::{Dependency, Drift, Latency};
use rand_distr::{Distribution, LogNormal};

/// Connections the dependency accepts in one trial at most (the proxies reuse theirs; nginx
/// without `keepalive` opens one per request: about 2,200 in a 40 s trial).
const MAX_CONNECTIONS: u64 = 20_000;
/// Requests served on one connection at most.
const MAX_REQUESTS_PER_CONNECTION: u64 = 20_000;
/// An idle connection is closed after this: every thread ends by itself.
const IDLE: Duration = Duration::from_secs(10);

/// The latency model of the scenario's dependency: log-normal with `median` (ms) and `sigma`,
/// the median multiplied by a piecewise-linear drift through `points` (seconds, factor),
/// constant before the first point and after the last, as `Drift::Points` is.
#[derive(Debug, Clone, PartialEq)]
pub struct Drifting {
    /// Median latency with no drift, in milliseconds.
    pub median_ms: f64,
    /// Sigma of ln(latency).
    pub sigma: f64,
    /// The drift's points: (seconds from the start, factor).
    pub points: Vec<(f64, f64)>,
}

impl Drifting {
    /// The model of a scenario's dependency; only what the check's scenarios use.
    pub fn of(d: &Dependency) -> Self {
        let Latency::LogNormal { median, sigma } = &d.latency else {
            panic!("the real-proxy dependency needs a LogNormal latency, not {:?}", d.latency)
        };
        let Drift::Points(points) = &d.drift else { panic!("the real-proxy dependency needs a Points drift") };
        Self {
            median_ms: median.ns() as f64 / 1e6,
            sigma: *sigma,
            points: points.iter().map(|(t, f)| (t.ns() as f64 / 1e9, *f)).collect(),
        }
    }

    /// The drift factor `t` seconds after the start.
    pub fn factor(&self, t: f64) -> f64 {
        let p = &self.points;
        if t <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((t0, f0), (t1, f1)) = (w[0], w[1]);
            if t <= t1 {
                return if t1 > t0 { f0 + (f1 - f0) * (t - t0) / (t1 - t0) } else { f1 };
            }
        }
        p[p.len() - 1].1
    }
}

/// A running dependency; [`Server::stop`] ends its accept loop.
pub struct Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
    /// Requests answered so far (answers written; a write to a connection the proxy has
    /// just closed may still count).
    pub served: Arc<AtomicU64>,
    /// Per request id: when it arrived (s from `t0`), the latency drawn and the time
    /// actually slept (ms).
    pub log: Arc<Mutex<BTreeMap<u64, Served>>>,
}

/// What the dependency did with one request.
#[derive(Debug, Clone, Copy)]
pub struct Served {
    /// Seconds from the start when the request had been read.
    pub arrived_s: f64,
    /// The latency drawn, in ms.
    pub drawn_ms: f64,
    /// The time slept, in ms (the drawn latency plus the scheduler's overshoot).
    pub slept_ms: f64,
}

impl Server {
    /// Listen on 127.0.0.1 (a port of the system's choosing) and serve `model` with the draws
    /// of `seed`, the drift's clock starting at `t0`. The accept loop blocks (a sleeping poll
    /// would delay nginx's new connection per request) and ends at [`Server::stop`] (or on
    /// drop), or after [`MAX_CONNECTIONS`].
    pub fn start(model: Drifting, seed: u64, t0: Instant) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the dependency on 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let log = Arc::new(Mutex::new(BTreeMap::new()));
        let model = Arc::new(model);
        let draws = Counter::new(seed, label_hash("realproxy/latency"));
        let (s, n, l) = (stop.clone(), served.clone(), log.clone());
        let accept = std::thread::spawn(move || {
            for _ in 0..MAX_CONNECTIONS {
                let conn = listener.accept();
                if s.load(Ordering::Relaxed) {
                    return;
                }
                let (conn, _) = conn.expect("dependency accept");
                let (m, n, l) = (model.clone(), n.clone(), l.clone());
                std::thread::spawn(move || serve(conn, &m, draws, t0, &n, &l));
            }
        });
        Self { port, stop, accept: Some(accept), served, log }
    }

    /// End the accept loop: set the flag, then wake the blocked `accept` with a connection of
    /// our own (connections in progress end when the proxy closes them, or idle).
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = TcpStream::connect(("127.0.0.1", self.port));
            h.join().expect("the dependency's accept loop panicked");
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Serve one keep-alive connection: read a request (a GET: no body), sleep its latency,
/// answer 200; until the peer closes, an error, or [`IDLE`].
fn serve(
    conn: TcpStream,
    model: &Drifting,
    draws: Counter,
    t0: Instant,
    served: &AtomicU64,
    log: &Mutex<BTreeMap<u64, Served>>,
) {
    conn.set_nonblocking(false).unwrap();
    conn.set_read_timeout(Some(IDLE)).unwrap();
    conn.set_nodelay(true).unwrap();
    let mut out = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    let lognormal = LogNormal::new(0.0, model.sigma).unwrap();
    for _ in 0..MAX_REQUESTS_PER_CONNECTION {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        // Headers, up to the blank line (the proxies send no body with a GET).
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" || h == "\n" {
                break;
            }
        }
        let read = Instant::now();
        let arrived = read.saturating_duration_since(t0).as_secs_f64();
        let id: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.strip_prefix("/r/"))
            .and_then(|i| i.parse().ok())
            .unwrap_or_else(|| panic!("the dependency got a request it did not expect: {line:?}"));
        let ms = model.median_ms * model.factor(arrived) * lognormal.sample(&mut draws.rng(id, 0));
        std::thread::sleep(Duration::from_secs_f64(ms / 1e3));
        let slept_ms = read.elapsed().as_secs_f64() * 1e3;
        log.lock().unwrap().insert(id, Served { arrived_s: arrived, drawn_ms: ms, slept_ms });
        let body = "ok";
        let answer =
            format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        // The proxy closes the connection of a request it timed out: the write fails, the
        // thread ends.
        if out.write_all(answer.as_bytes()).is_err() {
            return;
        }
        served.fetch_add(1, Ordering::Relaxed);
    }
}
