//! HAProxy: one backend of an `haproxy.cfg` (a `backend` or `listen` section), with what it
//! inherits from its `defaults` section, as the `HaproxyBackend` preset (`policy/haproxy.rs`).
//!
//! The file is read as HAProxy reads it (`doc/configuration.txt`, sections 2 and 4): a line
//! is a keyword and its arguments, `#` starts a comment, a section keyword (`global`,
//! `defaults`, `frontend`, `backend`, `listen`, ...) starts a section. A proxy takes its
//! settings from the last `defaults` section above it, or from the named one in `backend
//! NAME from DEFAULTS`. Read: `timeout queue|connect|server` (a number of milliseconds, or
//! with a unit `us ms s m h d`), `server NAME ADDR ... maxconn N maxqueue N`, `default-server
//! maxconn N maxqueue N`, `http-reuse never|safe|aggressive|always`, `retries N`, `retry-on` (whether `conn-failure` is among its
//! keywords), `option redispatch [N]` and `no option redispatch`, and the number of `server`
//! lines, and the health checks (`check`, `inter`, `fall`, `rise` on `server` and
//! `default-server` lines, `timeout check`) as a `health_check` snippet for the dependency's
//! `replicas:`. Every other directive is warned: a known one with why it has no equivalent, an
//! unknown one as unknown.

use super::ImportError;
use super::Pos;
use super::emit::{Field, Imported, OutLayer, Snippet, dur};
use crate::engine::Time;

/// Section keywords: a line starting with one of them starts a section.
const SECTIONS: [&str; 13] = [
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "resolvers",
    "peers",
    "userlist",
    "mailers",
    "cache",
    "program",
    "http-errors",
    "ring",
];

/// Directives of a proxy section with no equivalent, and why.
const WARNED: &[(&str, &str)] = &[
    ("balance", "balancing across servers is the dependency's `replicas` (balancing) in brownout"),
    ("mode", "the model is HTTP requests and answers"),
    ("http-check", "health checks are not modelled"),
    ("http-request", "request rules are not modelled"),
    ("http-response", "response rules are not modelled"),
    ("log", "observability only: nothing to simulate"),
    ("maxconn", "a proxy's own maxconn limits client connections: use the fleet's worker slots"),
    ("fullconn", "dynamic maxconn (minconn) is not modelled"),
];

/// Timeouts that have no equivalent, and why.
const OTHER_TIMEOUTS: &[(&str, &str)] = &[
    ("client", "the client side is the scenario's classes (their deadlines)"),
    ("http-request", "the client side is the scenario's classes"),
    ("http-keep-alive", "the client side's idle connections are the scenario's classes, not modelled"),
    ("client-fin", "the client side is the scenario's classes"),
    ("server-fin", "connection close is not modelled"),
    ("tunnel", "tunnels are not modelled"),
    ("tarpit", "tarpits are not modelled"),
];

/// One directive line: its words and their columns.
struct Line<'a> {
    no: usize,
    words: Vec<(usize, &'a str)>,
}

impl Line<'_> {
    /// Where word `i` is (the last word when the line has fewer: a missing value is
    /// reported after its key).
    fn at(&self, i: usize) -> Pos {
        Pos { line: self.no, col: self.words.get(i).or(self.words.last()).map_or(1, |w| w.0) }
    }
}

/// The words of a line, comments cut (a `#` that starts a word), with 1-based columns.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s + 1, &text[s..i]));
            }
        } else if start.is_none() {
            if c == '#' {
                break;
            }
            start = Some(i);
        }
    }
    out
}

/// A section: its keyword, name, `from` defaults name, and its lines.
struct Section<'a> {
    /// Where its keyword is.
    at: Pos,
    kind: &'a str,
    name: Option<&'a str>,
    from: Option<&'a str>,
    lines: Vec<Line<'a>>,
}

fn sections(text: &str) -> Vec<Section<'_>> {
    let mut out: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let w = words(raw);
        let Some(&(_, first)) = w.first() else { continue };
        if SECTIONS.contains(&first) {
            let name = w.get(1).map(|x| x.1).filter(|n| *n != "from");
            let from = w.iter().position(|x| x.1 == "from").and_then(|p| w.get(p + 1)).map(|x| x.1);
            out.push(Section { at: Pos { line: i + 1, col: w[0].0 }, kind: first, name, from, lines: Vec::new() });
        } else if let Some(s) = out.last_mut() {
            s.lines.push(Line { no: i + 1, words: w });
        }
    }
    out
}

/// An HAProxy time (`doc/configuration.txt` 2.5): a number of milliseconds, or with a unit.
fn time(line: &Line, i: usize, key: &str) -> Result<Time, ImportError> {
    let at = line.at(i);
    let err = |message: String| ImportError { line: at.line, col: at.col, message, ..ImportError::default() };
    let Some(&(_, text)) = line.words.get(i) else {
        return Err(err(format!("{key} needs a value")));
    };
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (n, unit) = text.split_at(digits);
    let per: Time = match unit {
        "us" => 1_000,
        "" | "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(err(format!("{key} {text}: not a time (a number, with an optional unit us, ms, s, m, h, d)"))),
    };
    let n: u64 = n.parse().map_err(|_| err(format!("{key} {text}: not a time")))?;
    // HAProxy keeps timeouts in milliseconds ticks below 2^31 (about 24.8 days).
    const MAX: Time = (i32::MAX as Time) * 1_000_000;
    let ns = n.checked_mul(per).filter(|&ns| ns <= MAX).ok_or_else(|| {
        err(format!("{key} {text} is out of range: HAProxy's timeouts are below 2147483647 ms (24.8 days)"))
    })?;
    if ns == 0 {
        return Err(err(format!("{key} {text}: 0 is no timeout; leave the line out instead")));
    }
    Ok(ns)
}

/// A count (`maxconn 20`), 0 ..= i32::MAX as HAProxy parses it.
fn count(line: &Line, i: usize, key: &str) -> Result<u32, ImportError> {
    let at = line.at(i);
    let text = line.words.get(i).map_or("", |w| w.1);
    text.parse::<u32>().ok().filter(|&n| n <= i32::MAX as u32).ok_or_else(|| ImportError {
        line: at.line,
        col: at.col,
        message: format!("{key} {text}: must be a whole number from 0 to 2147483647"),
        ..ImportError::default()
    })
}

/// A server's `maxconn` or `maxqueue` as set, with where its value is.
type Count = Option<(u32, Pos)>;

/// A timeout as set: its value, where the value is, and its origin.
type Set = Option<(Time, Pos, String)>;

/// What the backend sets, each value with where it came from.
#[derive(Default)]
struct Settings {
    timeouts: [Set; 3],
    /// Each server's (maxconn, maxqueue, where its line starts).
    servers: Vec<(Count, Count, Pos)>,
    default_server: (Count, Count),
    /// `retries N`.
    retries: Option<(u32, Pos, String)>,
    /// Whether `retry-on` lists `conn-failure` (or `all-retryable-errors`), with where.
    retry_on_conn: Option<(bool, Pos, String)>,
    /// `option redispatch` (true) or `no option redispatch` (false).
    redispatch: Option<(bool, Pos, String)>,
    /// The health checks: `check` on a server line, with where.
    check: Option<Pos>,
    /// `inter`, `fall`, `rise` (server or default-server), `timeout check`: each value as RON
    /// with where it is and its origin.
    health: [Option<(String, Pos, String)>; 4],
    /// `http-reuse`: the preset's variant, where its value is, and its origin.
    reuse: Option<(&'static str, Pos, String)>,
}

/// The health check's settings: (HAProxy keyword, `HealthCheck` field).
const HEALTH: [(&str, &str); 4] =
    [("inter", "inter"), ("fall", "fall"), ("rise", "rise"), ("timeout check", "timeout")];

/// Where a `health_check` snippet goes.
const HEALTH_PLACE: &str =
    "the dependency's `replicas:` (one replica per `server` line; checks take replicas out of the balancing)";

/// `retry-on` keywords other than `conn-failure` and `none` (`doc/configuration.txt`,
/// "retry-on"): layer-7 retries, which need the request kept for a replay.
const L7_RETRY_ON: &[&str] = &[
    "empty-response",
    "junk-response",
    "response-timeout",
    "0rtt-rejected",
    "404",
    "408",
    "425",
    "429",
    "500",
    "501",
    "502",
    "503",
    "504",
    "all-retryable-errors",
];

const TIMEOUTS: [(&str, &str); 3] =
    [("queue", "timeout_queue"), ("connect", "timeout_connect"), ("server", "timeout_server")];

/// Read one proxy section's (or defaults section's) lines into `s`.
fn read(section: &Section, s: &mut Settings, out: &mut Imported) -> Result<(), ImportError> {
    for line in &section.lines {
        let key = line.words[0].1;
        let word = |i: usize| line.words.get(i).map_or("", |w| w.1);
        match key {
            "retries" => {
                s.retries = Some((count(line, 1, "retries")?, line.at(1), out.origin(line.at(0), "retries")));
            }
            "retry-on" => {
                // `src/proxy.c`, `proxy_parse_retry_on`: `none` clears the set, `conn-failure`
                // (and `all-retryable-errors`, which includes it) keep connection retries.
                let mut conn = false;
                for i in 1..line.words.len() {
                    match word(i) {
                        "conn-failure" => conn = true,
                        "none" => conn = false,
                        other if L7_RETRY_ON.contains(&other) => {
                            conn |= other == "all-retryable-errors";
                            out.warn(
                                line.at(i),
                                &format!("retry-on {other}"),
                                "layer-7 retries are not modelled: only connection failures are retried",
                            );
                        }
                        other => {
                            out.warn(line.at(i), &format!("retry-on {other}"), "unknown retry-on keyword: ignored")
                        }
                    }
                }
                s.retry_on_conn = Some((conn, line.at(0), out.origin(line.at(0), "retry-on")));
            }
            "option" | "no" if key == "option" || word(1) == "option" => {
                let (at, name) = if key == "no" { (2, word(2)) } else { (1, word(1)) };
                if name != "redispatch" {
                    out.warn(line.at(0), key, "not modelled");
                    continue;
                }
                let origin =
                    out.origin(line.at(0), &format!("{} redispatch", if key == "no" { "no option" } else { "option" }));
                // `src/cfgparse-listen.c`: `option redispatch 0` clears the option; any other
                // interval changes only which retry is redispatched with one server up
                // (`policy::haproxy::redispatches`), which cannot change its replica.
                let interval = match word(at + 1) {
                    "" => -1,
                    text => text.parse::<i64>().map_err(|_| ImportError {
                        line: line.at(at + 1).line,
                        col: line.at(at + 1).col,
                        message: format!("option redispatch {text}: the interval must be a whole number"),
                        ..ImportError::default()
                    })?,
                };
                let on = key == "option" && interval != 0;
                if on && interval != -1 {
                    out.warn(
                        line.at(at + 1),
                        "option redispatch",
                        "the interval is left out: it adds a redispatch only with one server up, the retry's own, which balancing picks again (`stream_choose_redispatch`)",
                    );
                }
                s.redispatch = Some((on, line.at(0), origin));
            }
            "timeout" => {
                let what = line.words.get(1).map_or("", |w| w.1);
                if what == "check" {
                    let t = time(line, 2, "timeout check")?;
                    s.health[3] = Some((dur(t), line.at(2), out.origin(line.at(0), "timeout check")));
                } else if let Some(k) = TIMEOUTS.iter().position(|t| t.0 == what) {
                    let full = format!("timeout {what}");
                    let t = time(line, 2, &full)?;
                    s.timeouts[k] = Some((t, line.at(2), out.origin(line.at(0), &full)));
                } else if let Some((_, why)) = OTHER_TIMEOUTS.iter().find(|t| t.0 == what) {
                    out.warn(line.at(0), &format!("timeout {what}"), *why);
                } else {
                    out.warn(line.at(0), &format!("timeout {what}"), "unknown timeout: ignored");
                }
            }
            "http-reuse" => {
                // `doc/configuration.txt`, "http-reuse { never | safe | aggressive | always }".
                let text = line.words.get(1).map_or("", |w| w.1);
                let variant = match text {
                    "never" => "Never",
                    "safe" => "Safe",
                    "aggressive" => "Aggressive",
                    "always" => "Always",
                    _ => {
                        let at = line.at(1);
                        return Err(ImportError {
                            line: at.line,
                            col: at.col,
                            message: format!("http-reuse {text}: expected never, safe, aggressive or always"),
                            ..ImportError::default()
                        });
                    }
                };
                s.reuse = Some((variant, line.at(1), out.origin(line.at(0), "http-reuse")));
            }
            "server" | "default-server" => {
                let (mut conn, mut queue) = if key == "server" { (None, None) } else { s.default_server };
                let mut i = if key == "server" { 3 } else { 1 };
                while i < line.words.len() {
                    match line.words[i].1 {
                        "maxconn" => conn = Some((count(line, i + 1, "maxconn")?, line.at(i + 1))),
                        "maxqueue" => queue = Some((count(line, i + 1, "maxqueue")?, line.at(i + 1))),
                        "check" => s.check = s.check.or(Some(line.at(i))),
                        "inter" => {
                            let t = time(line, i + 1, "inter")?;
                            s.health[0] = Some((dur(t), line.at(i + 1), out.origin(line.at(i), "inter")));
                        }
                        "fall" | "rise" => {
                            let what = line.words[i].1;
                            let n = count(line, i + 1, what)?;
                            if n == 0 {
                                // `src/check.c`, `srv_parse_check_rise` / `_fall`: "has to be > 0".
                                let at = line.at(i + 1);
                                let message = format!("{what} 0: has to be > 0, as HAProxy requires");
                                return Err(ImportError {
                                    line: at.line,
                                    col: at.col,
                                    message,
                                    ..ImportError::default()
                                });
                            }
                            let k = if what == "fall" { 1 } else { 2 };
                            s.health[k] = Some((n.to_string(), line.at(i + 1), out.origin(line.at(i), what)));
                        }
                        other => out.warn(line.at(i), &format!("{key} {other}"), "not modelled: ignored"),
                    }
                    i += if matches!(line.words[i].1, "maxconn" | "maxqueue" | "inter" | "fall" | "rise") {
                        2
                    } else {
                        1
                    };
                }
                if key == "server" {
                    let (dc, dq) = s.default_server;
                    s.servers.push((conn.or(dc), queue.or(dq), line.at(0)));
                } else {
                    s.default_server = (conn, queue);
                }
            }
            _ => match WARNED.iter().find(|w| w.0 == key) {
                Some((_, why)) => out.warn(line.at(0), key, *why),
                None => out.warn(line.at(0), key, "unknown directive: ignored"),
            },
        }
    }
    Ok(())
}

/// The servers' values of `key` summed, cited at the first; None when there is no server or
/// one of them sets none (or 0: no limit).
fn sum(values: impl Iterator<Item = Count>, key: &'static str, out: &Imported) -> Result<Option<Field>, ImportError> {
    let Some(values) = values.map(|v| v.filter(|c| c.0 > 0)).collect::<Option<Vec<_>>>() else { return Ok(None) };
    let Some(&(_, at)) = values.first() else { return Ok(None) };
    let total = u32::try_from(values.iter().map(|c| u64::from(c.0)).sum::<u64>()).map_err(|_| ImportError {
        line: at.line,
        col: at.col,
        message: format!("the servers' {key} add up to more than 4294967295"),
        ..ImportError::default()
    })?;
    Ok(Some(Field { name: key, value: total.to_string(), origin: out.origin(at, key), at: Some(at) }))
}

/// Import the backend `name` (the only one when None) of an `haproxy.cfg`.
pub(crate) fn import(text: &str, name: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let all = sections(text);
    let proxies: Vec<&Section> = all.iter().filter(|s| matches!(s.kind, "backend" | "listen")).collect();
    let names: Vec<&str> = proxies.iter().filter_map(|s| s.name).collect();
    let whole = |message: String| ImportError { message, ..ImportError::default() };
    let pick = match name {
        Some(n) => proxies.iter().position(|s| s.name == Some(n)).ok_or_else(|| {
            whole(format!("no backend \"{n}\" in the file (backends: {})", crate::text::listing(&names)))
        })?,
        None if proxies.len() == 1 => 0,
        None if proxies.is_empty() => return Err(whole("no backend or listen section in the file".into())),
        None => {
            return Err(whole(format!(
                "the file has several backends: name one with --backend ({})",
                crate::text::listing(&names)
            )));
        }
    };
    let backend = proxies[pick];
    // The defaults it inherits: named with `from`, else the last one above it.
    let index = all.iter().position(|s| std::ptr::eq(s, backend)).expect("one of the sections");
    let defaults = match backend.from {
        Some(d) => Some(all.iter().find(|s| s.kind == "defaults" && s.name == Some(d)).ok_or_else(|| {
            whole(format!(
                "backend \"{}\" takes its defaults from \"{d}\", which is not in the file",
                backend.name.unwrap_or("")
            ))
        })?),
        None => all[..index].iter().rev().find(|s| s.kind == "defaults"),
    };
    let mut s = Settings::default();
    if let Some(d) = defaults {
        // A defaults section's `server` lines are not allowed; its default-server is.
        read(d, &mut s, out)?;
    }
    read(backend, &mut s, out)?;
    let mut fields = Vec::new();
    if s.servers.len() > 1 {
        out.warn(
            s.servers[1].2,
            "server",
            format!(
                "{} servers: brownout's limit is their maxconn summed; balancing across them is the dependency's `replicas`",
                s.servers.len()
            ),
        );
    }
    // A server without maxconn (or maxqueue) leaves the backend without that limit.
    if let Some(maxconn) = sum(s.servers.iter().map(|x| x.0), "maxconn", out)? {
        fields.push(maxconn);
        fields.extend(sum(s.servers.iter().map(|x| x.1), "maxqueue", out)?);
    }
    for (k, &(_, field)) in TIMEOUTS.iter().enumerate() {
        if let Some((t, at, origin)) = &s.timeouts[k] {
            fields.push(Field { name: field, value: dur(*t), origin: origin.clone(), at: Some(*at) });
        }
    }
    // A `retry-on` without `conn-failure` retries no connection: no retries, whatever
    // `retries` says.
    match (&s.retry_on_conn, &s.retries) {
        (Some((false, at, origin)), _) => {
            fields.push(Field { name: "retries", value: "0".into(), origin: origin.clone(), at: Some(*at) })
        }
        (_, Some((n, at, origin))) => {
            fields.push(Field { name: "retries", value: n.to_string(), origin: origin.clone(), at: Some(*at) })
        }
        _ => {}
    }
    if let Some((true, at, origin)) = &s.redispatch {
        fields.push(Field { name: "redispatch", value: "true".into(), origin: origin.clone(), at: Some(*at) });
    }
    if s.servers.len() > 1 {
        let at = s.servers[0].2;
        let origin = format!("{} server lines", s.servers.len());
        fields.push(Field { name: "servers", value: s.servers.len().to_string(), origin, at: Some(at) });
    }
    let health: Vec<Field> = HEALTH
        .iter()
        .zip(&s.health)
        .filter_map(|((_, name), v)| {
            v.as_ref().map(|(value, at, origin)| Field {
                name,
                value: value.clone(),
                origin: origin.clone(),
                at: Some(*at),
            })
        })
        .collect();
    match s.check {
        Some(_) => out.snippets.push(Snippet { field: "health_check", place: HEALTH_PLACE, fields: health }),
        None => {
            for ((key, _), v) in HEALTH.iter().zip(&s.health) {
                if let Some((_, at, _)) = v {
                    out.warn(*at, key, "no server has `check`: HAProxy runs no health check");
                }
            }
        }
    }
    if let Some((variant, at, origin)) = &s.reuse {
        fields.push(Field { name: "http_reuse", value: (*variant).into(), origin: origin.clone(), at: Some(*at) });
    }
    if fields.is_empty() {
        // Nothing to model: an empty preset would pass every request untouched.
        return Err(ImportError {
            line: backend.at.line,
            col: backend.at.col,
            message: format!(
                "backend \"{}\" sets neither a server maxconn, timeout queue, connect or server, nor retries: nothing to import",
                backend.name.unwrap_or("")
            ),
            ..ImportError::default()
        });
    }
    let what = format!("HAProxy backend {}", backend.name.unwrap_or(""));
    out.layers.push(OutLayer { policy: "HaproxyBackend", what, fields, classes: Vec::new() });
    Ok(())
}
