//! nginx: one `upstream` block of an `nginx.conf`, with the location that passes to it
//! (`proxy_pass http://NAME`) and what that location inherits from its `server` and `http`
//! blocks, as `NginxLimitReq`, a `Limiter` for `limit_conn`, and `NginxUpstream`
//! (`policy/nginx.rs`), outermost first in the order nginx runs them: `limit_req` before
//! `limit_conn` (both preaccess handlers, run in the reverse of their modules' registration,
//! `ngx_http_init_phase_handlers` in `src/http/ngx_http.c`; `auto/modules` registers
//! limit_conn first), then the upstream.
//!
//! The file is read as nginx reads it (`src/core/ngx_conf_file.c`, `ngx_conf_read_token`): a
//! directive is words up to `;`, or up to a `{ ... }` block; `#` at the start of a word
//! comments out the rest of the line; `"..."` and `'...'` quote, with `\` escaping the next
//! character; `${name}` is a word. Times are read as `ngx_parse_time` reads milliseconds (a
//! bare number is seconds; units `ms s m h d w`, combinable: `1m30s`). An inner block's
//! directive overrides the outer one's (`proxy_*`, `limit_req_status`); `limit_req` and
//! `limit_conn` lines are taken from the innermost level that has any, as
//! `ngx_http_limit_req_merge_conf` takes the whole array. Every other directive of the
//! upstream, of the location and of the blocks around it is warned (`listen` and
//! `server_name` only say where requests come in, and are not).

use super::ImportError;
use super::Pos;
use super::emit::{Field, Imported, OutLayer, dur};
use crate::engine::{MILLISECOND, Time};

mod conf;

use conf::{Directive, Word, error, parse};

/// A time in milliseconds as `ngx_parse_time(value, 0)` reads it (`src/core/ngx_parse.c`):
/// number-unit pairs in decreasing order of unit, `w d h m s ms`; a bare number is seconds.
fn msec(w: &Word, key: &str) -> Result<u64, ImportError> {
    let bad = || error(w.at, format!("{key} {}: not a time (e.g. 500ms, 2s, 1m30s)", w.text));
    let units: [(&str, u64); 6] =
        [("w", 604_800_000), ("d", 86_400_000), ("h", 3_600_000), ("ms", 1), ("m", 60_000), ("s", 1000)];
    // The order units must come in (ngx_parse_time's steps): w, d, h, m, s, ms.
    let rank = |u: &str| ["w", "d", "h", "m", "s", "ms"].iter().position(|x| *x == u).unwrap_or(0);
    let (mut total, mut rest, mut last) = (0u64, w.text.as_str(), None);
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let (unit, scale) = match units.iter().find(|(u, _)| rest.starts_with(u)) {
            Some(&(u, s)) => (u, s),
            None if rest.is_empty() => ("s", 1000),
            None => return Err(bad()),
        };
        if last.is_some_and(|l| rank(unit) <= l) {
            return Err(bad());
        }
        last = Some(rank(unit));
        rest = &rest[unit.len().min(rest.len())..];
        total = n.checked_mul(scale).and_then(|v| total.checked_add(v)).ok_or_else(bad)?;
    }
    // nginx keeps it below NGX_MAX_INT_T_VALUE; brownout's clock holds ~584 years in ns.
    if total > (Time::MAX / MILLISECOND) {
        return Err(error(w.at, format!("{key} {}: out of range", w.text)));
    }
    Ok(total)
}

/// A whole number `0 ..= max` (`ngx_atoi`), for `key`.
fn number(text: &str, at: Pos, key: &str, min: u64, max: u64) -> Result<u64, ImportError> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| error(at, format!("{key}: \"{text}\" must be a whole number from {min} to {max}")))
}

/// Directives of a `server`, `location` or `http` block with no equivalent, and why.
const WARNED: &[(&str, &str)] = &[
    ("access_log", "observability only: nothing to simulate"),
    ("error_log", "observability only: nothing to simulate"),
    ("log_format", "observability only: nothing to simulate"),
    ("proxy_send_timeout", "sending the request is instant in brownout: no effect"),
    (
        "proxy_http_version",
        "not modelled: the upstream's `keepalive` is taken as given (nginx keeps upstream connections only over HTTP/1.1)",
    ),
    ("proxy_set_header", "headers are not modelled"),
    ("proxy_buffering", "response buffering is not modelled"),
    ("keepalive_timeout", "client connections are not modelled"),
    ("limit_req_log_level", "observability only: nothing to simulate"),
    ("limit_conn_log_level", "observability only: nothing to simulate"),
    ("limit_req_dry_run", "a dry run refuses nothing: leave the layer out"),
    ("limit_conn_dry_run", "a dry run refuses nothing: leave the layer out"),
];

/// Directives that say where requests come in: read past silently.
const SILENT: &[&str] = &["listen", "server_name"];

/// Directives read (or descended into) by the importer, never warned.
const READ: &[&str] = &[
    "server",
    "location",
    "upstream",
    "proxy_pass",
    "proxy_read_timeout",
    "proxy_connect_timeout",
    "proxy_next_upstream",
    "proxy_next_upstream_tries",
    "proxy_next_upstream_timeout",
    "limit_req",
    "limit_req_zone",
    "limit_req_status",
    "limit_conn",
    "limit_conn_zone",
    "limit_conn_status",
];

/// `proxy_next_upstream` values with no equivalent, and why.
const NEXT_UNMAPPED: &[(&str, &str)] = &[
    ("invalid_header", "brownout's dependency never answers an invalid header"),
    ("http_502", "brownout's dependency never answers 502"),
    ("http_504", "brownout's dependency never answers 504"),
    ("http_403", "brownout's dependency never answers 403"),
    ("http_404", "brownout's dependency never answers 404"),
    ("http_429", "brownout's dependency never answers 429"),
    ("non_idempotent", "brownout's requests are taken as idempotent"),
    ("updating", "caches are not modelled"),
];

/// Warn every directive of `block` that is neither read nor silent.
fn warn_unread(block: &[Directive], out: &mut Imported) {
    for d in block {
        let name = d.name();
        if READ.contains(&name) || SILENT.contains(&name) {
            continue;
        }
        match WARNED.iter().find(|w| w.0 == name) {
            Some((_, why)) => out.warn(d.at(), name, *why),
            None => out.warn(d.at(), name, "unknown directive: ignored"),
        }
    }
}

/// The blocks from `http` down to a location that passes to the upstream, innermost last.
fn find_location<'a>(
    block: &'a [Directive],
    name: &str,
    chain: &mut Vec<&'a Directive>,
    found: &mut Vec<Vec<&'a Directive>>,
) {
    for d in block {
        let Some(inner) = &d.block else {
            if d.name() == "proxy_pass" && chain.last().is_some_and(|l| l.name() == "location") {
                let target = d.arg(1).map_or("", |w| w.text.as_str());
                let host = target.strip_prefix("http://").or_else(|| target.strip_prefix("https://")).unwrap_or("");
                if host.split('/').next() == Some(name) {
                    found.push(chain.clone());
                }
            }
            continue;
        };
        if matches!(d.name(), "server" | "location") {
            chain.push(d);
            find_location(inner, name, chain, found);
            chain.pop();
        }
    }
}

/// The innermost directive called `key` along `levels` (outermost first), as nginx's merge
/// takes the inner value.
fn innermost<'a>(levels: &[&'a [Directive]], key: &str) -> Option<&'a Directive> {
    levels.iter().rev().find_map(|l| l.iter().rev().find(|d| d.name() == key && d.block.is_none()))
}

/// An upstream block's `keepalive N`, `keepalive_timeout T` or `keepalive_requests N` as the
/// `NginxUpstream` field it sets (ranges as `ngx_http_upstream_keepalive` and nginx's
/// `ngx_conf_set_msec_slot` and `ngx_conf_set_num_slot` take them); None for any other
/// directive.
fn keepalive(d: &Directive, out: &Imported) -> Result<Option<Field>, ImportError> {
    let key = d.name();
    let name = match key {
        "keepalive" => "keepalive",
        "keepalive_timeout" => "keepalive_timeout",
        "keepalive_requests" => "keepalive_requests",
        _ => return Ok(None),
    };
    let w = d.arg(1).ok_or_else(|| error(d.at(), format!("{key} needs a value")))?;
    let value = if key == "keepalive_timeout" {
        let ms = msec(w, key)?;
        if ms == 0 {
            return Err(error(w.at, format!("{key} 0: brownout needs a time > 0")));
        }
        dur(ms * MILLISECOND)
    } else {
        // `keepalive 0` is refused by nginx ("invalid value"); so is a request limit of 0.
        number(&w.text, w.at, key, 1, u64::from(u32::MAX))?.to_string()
    };
    Ok(Some(Field { name, value, origin: out.origin(d.at(), key), at: Some(w.at) }))
}

/// The `key` lines of the innermost level that has any (`limit_req`, `limit_conn`).
fn innermost_all<'a>(levels: &[&'a [Directive]], key: &str) -> Vec<&'a Directive> {
    levels
        .iter()
        .rev()
        .map(|l| l.iter().filter(|d| d.name() == key && d.block.is_none()).collect::<Vec<_>>())
        .find(|v| !v.is_empty())
        .unwrap_or_default()
}

/// `zone=NAME[:SIZE]` among a directive's arguments: NAME and where it is.
fn zone_of(d: &Directive) -> Option<(&str, Pos)> {
    d.words[1..].iter().find_map(|w| w.text.strip_prefix("zone=").map(|z| (z.split(':').next().unwrap_or(z), w.at)))
}

/// The `*_zone` directive of `http` that defines zone `name`.
fn zone<'a>(http: &'a [Directive], key: &str, name: &str) -> Option<&'a Directive> {
    http.iter().find(|d| d.name() == key && zone_of(d).is_some_and(|z| z.0 == name))
}

/// Warn a zone keyed per client: brownout keeps one node per instance.
fn warn_key(z: &Directive, out: &mut Imported) {
    if let Some(k) = z.arg(1).filter(|k| k.text.contains('$') && k.text != "$server_name") {
        out.warn(
            k.at,
            &format!("{} key {}", z.name(), k.text),
            "brownout keeps one count per instance, as if every request had the same key",
        );
    }
}

/// The status of `limit_req_status` / `limit_conn_status` (400..=599 in nginx; brownout
/// answers 429 or 503), or 503, with its field.
fn status(levels: &[&[Directive]], key: &'static str, out: &Imported) -> Result<Option<Field>, ImportError> {
    let Some(d) = innermost(levels, key) else { return Ok(None) };
    let w = d.arg(1).ok_or_else(|| error(d.at(), format!("{key} needs a status")))?;
    let n = number(&w.text, w.at, key, 400, 599)?;
    if !matches!(n, 429 | 503) {
        return Err(error(w.at, format!("{key} {n}: brownout answers a refusal 429 or 503")));
    }
    Ok(Some(Field { name: "status", value: n.to_string(), origin: out.origin(d.at(), key), at: Some(w.at) }))
}

/// Import the upstream `name` (the only one when None) of an `nginx.conf`.
pub(crate) fn import(text: &str, name: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let top = parse(text)?;
    let whole = |message: String| ImportError { message, ..ImportError::default() };
    let http: &[Directive] = top
        .iter()
        .find(|d| d.name() == "http")
        .and_then(|d| d.block.as_deref())
        .ok_or_else(|| whole("no http block in the file".into()))?;
    let upstreams: Vec<&Directive> = http.iter().filter(|d| d.name() == "upstream" && d.block.is_some()).collect();
    let names: Vec<&str> = upstreams.iter().filter_map(|u| u.arg(1)).map(|w| w.text.as_str()).collect();
    let upstream = match name {
        Some(n) => upstreams.iter().find(|u| u.arg(1).is_some_and(|w| w.text == n)).ok_or_else(|| {
            whole(format!("no upstream \"{n}\" in the file (upstreams: {})", crate::text::listing(&names)))
        })?,
        None if upstreams.len() == 1 => &upstreams[0],
        None if upstreams.is_empty() => return Err(whole("no upstream block in the http block".into())),
        None => {
            return Err(whole(format!(
                "the file has several upstreams: name one with --upstream ({})",
                crate::text::listing(&names)
            )));
        }
    };
    let up_name = upstream.arg(1).map_or("", |w| w.text.as_str());
    let mut found = Vec::new();
    find_location(http, up_name, &mut Vec::new(), &mut found);
    let Some(chain) = found.first() else {
        return Err(error(
            upstream.at(),
            format!("no location passes to upstream \"{up_name}\" (proxy_pass http://{up_name})"),
        ));
    };
    if let Some(other) = found.get(1) {
        let at = other.last().expect("a location").at();
        out.warn(at, "location", format!("{} locations pass to \"{up_name}\": the first is read", found.len()));
    }
    // The levels, outermost first: http, server, location(s).
    let mut levels: Vec<&[Directive]> = vec![http];
    levels.extend(chain.iter().map(|d| d.block.as_deref().expect("a block")));
    for l in &levels {
        warn_unread(l, out);
    }
    // Checked even where no limit_req or limit_conn uses them, as nginx checks them.
    let req_status = status(&levels, "limit_req_status", out)?;
    let conn_status = status(&levels, "limit_conn_status", out)?;

    // limit_req: the first line of the innermost level that has any.
    let reqs = innermost_all(&levels, "limit_req");
    if let Some(&lr) = reqs.first() {
        for extra in &reqs[1..] {
            out.warn(extra.at(), "limit_req", "brownout reads one limit_req per location: the first");
        }
        let (zname, zat) = zone_of(lr).ok_or_else(|| error(lr.at(), "limit_req needs zone=NAME".into()))?;
        let z = zone(http, "limit_req_zone", zname)
            .ok_or_else(|| error(zat, format!("no limit_req_zone defines zone \"{zname}\"")))?;
        warn_key(z, out);
        let rw = z.words[1..]
            .iter()
            .find(|w| w.text.starts_with("rate="))
            .ok_or_else(|| error(z.at(), "limit_req_zone needs rate=".into()))?;
        let r = &rw.text[5..];
        let (n, per) = if let Some(n) = r.strip_suffix("r/s") {
            (n, "PerSecond")
        } else if let Some(n) = r.strip_suffix("r/m") {
            (n, "PerMinute")
        } else {
            (r, "PerSecond")
        };
        let n = number(n, rw.at, "limit_req_zone rate", 1, u64::from(u32::MAX))?;
        let at = |d: &Directive, w: &Word, key: &str, value: String, name: &'static str| Field {
            name,
            value,
            origin: format!("{}:{} {key}", out.label, d.at().line),
            at: Some(w.at),
        };
        let mut fields = vec![at(z, rw, "limit_req_zone rate", format!("{per}({n})"), "rate")];
        for w in &lr.words[1..] {
            if let Some(b) = w.text.strip_prefix("burst=") {
                let b = number(b, w.at, "limit_req burst", 1, u64::from(u32::MAX))?;
                fields.push(at(lr, w, "limit_req burst", b.to_string(), "burst"));
            } else if let Some(d) = w.text.strip_prefix("delay=") {
                let d = number(d, w.at, "limit_req delay", 1, u64::from(u32::MAX))?;
                fields.push(at(lr, w, "limit_req delay", d.to_string(), "delay"));
            } else if w.text == "nodelay" {
                fields.push(at(lr, w, "limit_req nodelay", "true".into(), "nodelay"));
            } else if !w.text.starts_with("zone=") {
                return Err(error(w.at, format!("limit_req: invalid parameter \"{}\"", w.text)));
            }
        }
        if fields.iter().any(|f| f.name == "nodelay") {
            // As nginx, whichever of nodelay and delay= comes last wins.
            let last = fields.iter().rposition(|f| f.name == "nodelay" || f.name == "delay").expect("one");
            let keep = fields[last].name;
            fields.retain(|f| !matches!(f.name, "nodelay" | "delay") || f.name == keep);
        }
        fields.extend(req_status);
        out.layers.push(OutLayer {
            policy: "NginxLimitReq",
            what: format!("nginx limit_req zone={zname}"),
            fields,
            classes: Vec::new(),
        });
    }

    // limit_conn: a Limiter with no queue (policy::nginx::limit_conn).
    let conns = innermost_all(&levels, "limit_conn");
    if let Some(&lc) = conns.first() {
        for extra in &conns[1..] {
            out.warn(extra.at(), "limit_conn", "brownout reads one limit_conn per location: the first");
        }
        let zw = lc.arg(1).ok_or_else(|| error(lc.at(), "limit_conn needs a zone and a number".into()))?;
        let z = zone(http, "limit_conn_zone", &zw.text)
            .ok_or_else(|| error(zw.at, format!("no limit_conn_zone defines zone \"{}\"", zw.text)))?;
        warn_key(z, out);
        let nw = lc.arg(2).ok_or_else(|| error(lc.at(), "limit_conn needs a number".into()))?;
        let n = number(&nw.text, nw.at, "limit_conn", 1, 65535)?;
        let origin = |key: &str| format!("{}:{} {key}", out.label, lc.at().line);
        let st = conn_status;
        let refuse = if st.as_ref().is_some_and(|f| f.value == "429") { "Rejected" } else { "Unavailable" };
        let mut fields = vec![
            Field { name: "permits", value: n.to_string(), origin: origin("limit_conn"), at: Some(nw.at) },
            Field { name: "queue", value: "0".into(), origin: "limit_conn never queues".into(), at: None },
        ];
        fields.push(match st {
            Some(f) => Field { name: "refuse_as", value: refuse.into(), origin: f.origin, at: f.at },
            None => Field {
                name: "refuse_as",
                value: refuse.into(),
                origin: "limit_conn_status default 503".into(),
                at: None,
            },
        });
        out.layers.push(OutLayer {
            policy: "Limiter",
            what: format!("nginx limit_conn {}", zw.text),
            fields,
            classes: Vec::new(),
        });
    }

    // The upstream: its servers' max_conns.
    let block = upstream.block.as_deref().expect("an upstream block");
    let mut servers: Vec<(Option<(u64, Pos)>, Pos)> = Vec::new();
    let mut keep = Vec::new();
    for d in block {
        if let Some(field) = keepalive(d, out)? {
            keep.push(field);
            continue;
        }
        if d.name() != "server" {
            let why = match d.name() {
                "keepalive_time" => "a connection's longest life is not modelled (1 h by default)",
                "least_conn" | "ip_hash" | "hash" | "random" => {
                    "balancing across servers is the dependency's `replicas`"
                }
                "zone" => "shared memory is not modelled: each instance counts its own connections",
                _ => "unknown directive: ignored",
            };
            out.warn(d.at(), d.name(), why);
            continue;
        }
        let mut conns = None;
        for w in &d.words[2..] {
            if let Some(v) = w.text.strip_prefix("max_conns=") {
                conns = Some((number(v, w.at, "server max_conns", 0, u64::from(u32::MAX))?, w.at));
            } else {
                let key = w.text.split('=').next().unwrap_or("");
                let why = match key {
                    "max_fails" | "fail_timeout" => {
                        "passive health checks are not modelled (with one server nginx never skips it)"
                    }
                    "weight" => "balancing across servers is the dependency's `replicas`",
                    "backup" | "down" => "servers are not modelled one by one",
                    _ => "not modelled: ignored",
                };
                out.warn(w.at, &format!("server {key}"), why);
            }
        }
        servers.push((conns, d.at()));
    }
    if servers.is_empty() {
        return Err(error(upstream.at(), format!("upstream \"{up_name}\" has no server")));
    }
    let mut fields = Vec::new();
    // A server without max_conns (or with 0) takes any number: nginx never refuses then.
    if let Some(limits) = servers.iter().map(|s| s.0.filter(|c| c.0 > 0)).collect::<Option<Vec<_>>>() {
        let (first, at) = limits[0];
        let each = if limits.iter().all(|c| c.0 == first) {
            first
        } else {
            let sum: u64 = limits.iter().map(|c| c.0).sum();
            out.warn(
                limits[1].1,
                "server max_conns",
                format!(
                    "the servers' max_conns differ: brownout takes their mean, {} per server",
                    sum / limits.len() as u64
                ),
            );
            sum / limits.len() as u64
        };
        fields.push(Field {
            name: "max_conns",
            value: each.to_string(),
            origin: out.origin(at, "max_conns"),
            at: Some(at),
        });
    }
    if servers.len() > 1 {
        let at = servers[1].1;
        fields.push(Field {
            name: "servers",
            value: servers.len().to_string(),
            origin: out.origin(at, &format!("{} server lines", servers.len())),
            at: None,
        });
    }
    if let Some(d) = innermost(&levels, "proxy_read_timeout") {
        let w = d.arg(1).ok_or_else(|| error(d.at(), "proxy_read_timeout needs a time".into()))?;
        let ms = msec(w, "proxy_read_timeout")?;
        if ms == 0 {
            return Err(error(w.at, "proxy_read_timeout 0: brownout needs a timeout > 0".into()));
        }
        let value = dur(ms * MILLISECOND);
        fields.push(Field {
            name: "proxy_read_timeout",
            value,
            origin: out.origin(d.at(), "proxy_read_timeout"),
            at: Some(w.at),
        });
    }
    if let Some(d) = innermost(&levels, "proxy_connect_timeout") {
        let w = d.arg(1).ok_or_else(|| error(d.at(), "proxy_connect_timeout needs a time".into()))?;
        let ms = msec(w, "proxy_connect_timeout")?;
        if ms == 0 {
            return Err(error(w.at, "proxy_connect_timeout 0: brownout needs a timeout > 0".into()));
        }
        fields.push(Field {
            name: "proxy_connect_timeout",
            value: dur(ms * MILLISECOND),
            origin: out.origin(d.at(), "proxy_connect_timeout"),
            at: Some(w.at),
        });
    }
    fields.extend(keep);
    if let Some(d) = innermost(&levels, "proxy_next_upstream") {
        let mut kinds = Vec::new();
        let mut off = false;
        for w in &d.words[1..] {
            match w.text.as_str() {
                "error" => kinds.push("Error"),
                "timeout" => kinds.push("Timeout"),
                "http_500" => kinds.push("Http500"),
                "http_503" => kinds.push("Http503"),
                "off" => off = true,
                other => match NEXT_UNMAPPED.iter().find(|n| n.0 == other) {
                    Some((_, why)) => out.warn(w.at, &format!("proxy_next_upstream {other}"), *why),
                    None => return Err(error(w.at, format!("proxy_next_upstream: invalid value \"{other}\""))),
                },
            }
        }
        if off {
            kinds.clear(); // ngx_http_proxy_merge_loc_conf: `off` clears every other kind
        }
        let at = d.arg(1).map(|w| w.at);
        fields.push(Field {
            name: "proxy_next_upstream",
            value: format!("[{}]", kinds.join(", ")),
            origin: out.origin(d.at(), "proxy_next_upstream"),
            at,
        });
    }
    if let Some(d) = innermost(&levels, "proxy_next_upstream_tries") {
        let w = d.arg(1).ok_or_else(|| error(d.at(), "proxy_next_upstream_tries needs a number".into()))?;
        let n = number(&w.text, w.at, "proxy_next_upstream_tries", 0, u64::from(u32::MAX))?;
        fields.push(Field {
            name: "proxy_next_upstream_tries",
            value: n.to_string(),
            origin: out.origin(d.at(), "proxy_next_upstream_tries"),
            at: Some(w.at),
        });
    }
    if let Some(d) = innermost(&levels, "proxy_next_upstream_timeout") {
        let w = d.arg(1).ok_or_else(|| error(d.at(), "proxy_next_upstream_timeout needs a time".into()))?;
        // 0, nginx's default, is no bound: nothing to write.
        let ms = msec(w, "proxy_next_upstream_timeout")?;
        if ms > 0 {
            fields.push(Field {
                name: "proxy_next_upstream_timeout",
                value: dur(ms * MILLISECOND),
                origin: out.origin(d.at(), "proxy_next_upstream_timeout"),
                at: Some(w.at),
            });
        }
    }
    out.layers.push(OutLayer {
        policy: "NginxUpstream",
        what: format!("nginx upstream {up_name}"),
        fields,
        classes: Vec::new(),
    });
    Ok(())
}
