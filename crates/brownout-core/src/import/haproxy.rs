//! HAProxy: one backend of an `haproxy.cfg` (a `backend` or `listen` section), with what it
//! inherits from its `defaults` section, as the `HaproxyBackend` preset (`policy/haproxy.rs`).
//!
//! The file is read as HAProxy reads it (`doc/configuration.txt`, sections 2 and 4): a line
//! is a keyword and its arguments, `#` starts a comment, a section keyword (`global`,
//! `defaults`, `frontend`, `backend`, `listen`, ...) starts a section. A proxy takes its
//! settings from the last `defaults` section above it, or from the named one in `backend
//! NAME from DEFAULTS`. Read: `timeout queue|connect|server` (a number of milliseconds, or
//! with a unit `us ms s m h d`), `server NAME ADDR ... maxconn N maxqueue N`, `default-server
//! maxconn N maxqueue N`, `http-reuse never|safe|aggressive|always`. Every other directive is warned: a known one with why it has no
//! equivalent, an unknown one as unknown.

use super::ImportError;
use super::Pos;
use super::emit::{Field, Imported, OutLayer, dur};
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
    (
        "retries",
        "HAProxy retries connection failures only (`retry-on conn-failure` by default); a brownout call connects at once, so nothing is retried",
    ),
    ("balance", "balancing across servers is the dependency's `replicas` (balancing) in brownout"),
    ("mode", "the model is HTTP requests and answers"),
    ("option", "not modelled"),
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
    ("check", "health checks are not modelled"),
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
    /// `http-reuse`: the preset's variant, where its value is, and its origin.
    reuse: Option<(&'static str, Pos, String)>,
}

const TIMEOUTS: [(&str, &str); 3] =
    [("queue", "timeout_queue"), ("connect", "timeout_connect"), ("server", "timeout_server")];

/// Read one proxy section's (or defaults section's) lines into `s`.
fn read(section: &Section, s: &mut Settings, out: &mut Imported) -> Result<(), ImportError> {
    for line in &section.lines {
        let key = line.words[0].1;
        match key {
            "timeout" => {
                let what = line.words.get(1).map_or("", |w| w.1);
                if let Some(k) = TIMEOUTS.iter().position(|t| t.0 == what) {
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
                        "check" | "inter" | "fall" | "rise" => {
                            out.warn(line.at(i), line.words[i].1, "health checks are not modelled")
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
    if let Some((variant, at, origin)) = &s.reuse {
        fields.push(Field { name: "http_reuse", value: (*variant).into(), origin: origin.clone(), at: Some(*at) });
    }
    if fields.is_empty() {
        // Nothing to model: an empty preset would pass every request untouched.
        return Err(ImportError {
            line: backend.at.line,
            col: backend.at.col,
            message: format!(
                "backend \"{}\" sets neither a server maxconn nor timeout queue, connect or server: nothing to import",
                backend.name.unwrap_or("")
            ),
            ..ImportError::default()
        });
    }
    let what = format!("HAProxy backend {}", backend.name.unwrap_or(""));
    out.layers.push(OutLayer { policy: "HaproxyBackend", what, fields, classes: Vec::new() });
    Ok(())
}
