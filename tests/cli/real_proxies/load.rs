//! The open-loop load generator: Poisson arrivals at the scenario's rate, each request sent on
//! its own connection and thread at its scheduled time whatever the earlier ones got, so a
//! slow proxy never slows the offered load (at 55/s and at most 5 s each, about 275 threads
//! at worst, 40 in the peak).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use brownout::engine::stream;
use rand_distr::{Distribution, Exp};

/// Requests one trial sends at most (55/s for 40 s is about 2,200).
const MAX_REQUESTS: usize = 50_000;

/// One request as the client saw it.
#[derive(Debug, Clone)]
pub struct Sent {
    /// Its id, the path `/r/<id>`.
    pub id: u64,
    /// When it was scheduled, seconds from the start: its phase.
    pub at_s: f64,
    /// When its thread started sending, seconds from the start (after `at_s` by the
    /// scheduler's lag).
    pub sent_s: f64,
    /// The status the client read; 0 when no answer came within the cap.
    pub status: u16,
    /// From just before connecting to the end of the answer, in milliseconds.
    pub latency_ms: f64,
}

/// Poisson arrival times at `rate_per_s` over `horizon_s`, from the named stream
/// `realproxy/arrivals` of `seed`.
pub fn schedule(seed: u64, rate_per_s: f64, horizon_s: f64) -> Vec<f64> {
    let mut rng = stream(seed, "realproxy/arrivals");
    let gap = Exp::new(rate_per_s).unwrap();
    let mut t = 0.0;
    let mut at = Vec::new();
    loop {
        t += gap.sample(&mut rng);
        if t >= horizon_s || at.len() == MAX_REQUESTS {
            return at;
        }
        at.push(t);
    }
}

/// Send `GET /r/<i>` to 127.0.0.1:`port` at `t0 + at[i]` for every `i`, and wait for every
/// answer (each bounded by `cap`).
pub fn run(port: u16, at: &[f64], t0: Instant, cap: Duration) -> Vec<Sent> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut inflight = Vec::with_capacity(at.len());
    for (id, &at_s) in at.iter().enumerate() {
        let when = t0 + Duration::from_secs_f64(at_s);
        std::thread::sleep(when.saturating_duration_since(Instant::now()));
        let id = id as u64;
        inflight.push(std::thread::spawn(move || {
            let sent_s = t0.elapsed().as_secs_f64();
            let (status, latency_ms) = one(addr, id, cap);
            Sent { id, at_s, sent_s, status, latency_ms }
        }));
    }
    inflight.into_iter().map(|h| h.join().expect("a request thread panicked")).collect()
}

/// One request on its own connection: the status (0: none within `cap`) and the latency.
fn one(addr: SocketAddr, id: u64, cap: Duration) -> (u16, f64) {
    let start = Instant::now();
    let ms = |s: Instant| s.elapsed().as_secs_f64() * 1e3;
    let Ok(mut c) = TcpStream::connect_timeout(&addr, cap) else { return (0, ms(start)) };
    c.set_nodelay(true).unwrap();
    c.set_read_timeout(Some(cap)).unwrap();
    c.set_write_timeout(Some(cap)).unwrap();
    let req = format!("GET /r/{id} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    if c.write_all(req.as_bytes()).is_err() {
        return (0, ms(start));
    }
    // `Connection: close`: the proxy closes after its answer, so the answer ends at EOF.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(_) => return (0, ms(start)),
        }
        if start.elapsed() > cap {
            return (0, ms(start));
        }
    }
    let latency = ms(start);
    let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, latency)
}
