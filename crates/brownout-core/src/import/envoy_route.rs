//! Envoy route configuration: a `RouteConfiguration` (`virtual_hosts`), a bootstrap listener's
//! `route_config`, or one virtual host (`routes`). Each route is one class (named by the
//! route's `name`, else its match `prefix` or `path`) and imports as layers for that class
//! alone: the route's `timeout` as a `Timeout` outside the retry (it bounds the whole
//! request, retries included; Envoy's default 15 s, 0 = none), its `retry_policy` (else the
//! virtual host's: the innermost one applies whole, never merged) as a `Retry`, and the
//! policy's `per_try_timeout` as a `Timeout` inside it.
//!
//! `retry_on` maps onto the retry predicates as Envoy decides a retry
//! (`source/common/router/retry_state_impl.cc`, `wouldRetryFromHeaders` and
//! `wouldRetryFromReset`; a per-try timeout is a local reset, `Router::Filter::onPerTryTimeoutCommon`):
//! `5xx` retries failed calls, timeouts and the dependency's 503; `gateway-error` timeouts and
//! the 503 (a failed call is taken as a 500, not a gateway error); `reset` timeouts;
//! `retriable-status-codes` 503 (the dependency's refusal) and 500 (a failed call). Values with
//! no meaning here are warned. Envoy never retries its own overflow (`Overflow` resets) or a
//! local rate limit, as brownout never retries a layer's refusal by default. The backoff is
//! Envoy's `JitteredExponentialBackOffStrategy` (`source/common/common/backoff_strategy.cc`):
//! a uniform draw below an interval that starts at `base_interval` (25 ms) and doubles up to
//! `max_interval` (10 x base), which is `Retry`'s multiplier 2 with full jitter.

use super::ImportError;
use super::emit::{Field, Imported, OutLayer, dur};
use super::read::{envoy_duration, int, string};
use super::tree::{Entry, Node, Pos, Val, at_pos};
use crate::engine::{MILLISECOND, SECOND, Time};

const NOT_MODELLED: &str = "not a setting brownout models: not imported";

/// A route's class and the options its layers come from.
pub(super) struct Route<'a> {
    /// The class the layers are for.
    pub class: String,
    /// Where the route is in the file.
    pub at: Pos,
    /// The request timeout: its entry, or None for the default.
    pub timeout: Option<&'a Entry>,
    /// The retry policy's entry, if any.
    pub retry: Option<&'a Entry>,
}

/// What a retry policy retries, as brownout's predicates.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct RetryOn {
    /// Failed calls.
    pub error: bool,
    /// Timed-out attempts.
    pub timeout: bool,
    /// The dependency's 503.
    pub dependency_503: bool,
}

impl RetryOn {
    /// The predicate fields of a `Retry`, each written (a route's retry retries only what
    /// `retry_on` names).
    pub fn fields(self, origin: &str) -> Vec<Field> {
        let refusal = if self.dependency_503 { "[Dependency503]" } else { "[]" };
        [("on_error", self.error.to_string()), ("on_timeout", self.timeout.to_string())]
            .into_iter()
            .chain([("on_refusal", refusal.to_string())])
            .map(|(name, value)| Field { name, value, origin: origin.to_string(), at: None })
            .collect()
    }
}

/// Envoy's `retry_on` values: what each retries here, or why it has no meaning here.
pub(super) fn retry_on_value(v: &str) -> Option<Result<RetryOn, &'static str>> {
    const GRPC: &str = "a gRPC status: brownout's calls carry none, so nothing is retried for it";
    Some(match v {
        "5xx" => Ok(RetryOn { error: true, timeout: true, dependency_503: true }),
        "gateway-error" => Ok(RetryOn { error: false, timeout: true, dependency_503: true }),
        "reset" => Ok(RetryOn { error: false, timeout: true, dependency_503: false }),
        "connect-failure" => Err("a connection failure (a partition) is not told apart from the dependency's \
             error answers, which connect-failure does not retry: failed calls not retried"),
        "refused-stream" => Err("HTTP/2 REFUSED_STREAM is not modelled (a full dependency queue answers 503)"),
        "retriable-4xx" => Err("retries a 409, which brownout's dependency never answers"),
        "retriable-status-codes" => Ok(RetryOn::default()), // the codes decide
        "envoy-ratelimited" | "retriable-headers" | "http3-post-connect-failure" | "reset-before-request" => {
            Err("not modelled: nothing is retried for it")
        }
        "cancelled" | "deadline-exceeded" | "internal" | "resource-exhausted" | "unavailable" => Err(GRPC),
        _ => return None,
    })
}

/// A status code of `retriable_status_codes`: what it retries here.
pub(super) fn status_code(code: i64) -> Result<RetryOn, &'static str> {
    match code {
        503 => Ok(RetryOn { dependency_503: true, ..RetryOn::default() }),
        500 => Ok(RetryOn { error: true, ..RetryOn::default() }),
        504 => Err("an attempt's timeout is a reset, not a 504 answer: nothing is retried for it"),
        _ => Err("brownout's dependency never answers this status: nothing is retried for it"),
    }
}

impl std::ops::BitOr for RetryOn {
    type Output = RetryOn;
    fn bitor(self, o: RetryOn) -> RetryOn {
        RetryOn {
            error: self.error || o.error,
            timeout: self.timeout || o.timeout,
            dependency_503: self.dependency_503 || o.dependency_503,
        }
    }
}

const ROUTE: &[&str] = &["name", "match", "route"];
const RETRY_POLICY: &[&str] =
    &["retry_on", "num_retries", "per_try_timeout", "retry_back_off", "retriable_status_codes"];
const RETRY_WARN: &[(&str, &str)] = &[
    ("retry_host_predicate", "host selection on retry is not modelled (a retry may go to any replica)"),
    ("host_selection_retry_max_attempts", "host selection on retry is not modelled"),
    ("retry_priority", "priority selection on retry is not modelled"),
    ("retriable_headers", "response headers are not modelled"),
    ("retriable_request_headers", "request headers are not modelled"),
    ("rate_limited_retry_back_off", "rate-limited backoff headers are not modelled"),
    ("retry_options_predicates", "retry option predicates are not modelled"),
    ("per_try_idle_timeout", "idle timeouts are not modelled"),
    ("retry_budget", "a retry budget lives on the cluster's circuit_breakers thresholds; not imported from a route"),
];

/// Whether `root` is a route configuration (rather than a cluster).
pub(super) fn is_route_config(root: &Node) -> bool {
    ["virtual_hosts", "routes", "route_config"].iter().any(|k| root.get_exact(k).is_some())
}

pub(crate) fn import(root: &Node, wanted: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let config = root.get_exact("route_config").map_or(root, |e| &e.value);
    let hosts: Vec<&Node> = match config.get_exact("virtual_hosts") {
        Some(h) => match &h.value.v {
            Val::Seq(v) => v.iter().collect(),
            _ => return Err(at_pos(h.value.at, format!("virtual_hosts: expected a list, found {}", h.value.kind()))),
        },
        None => vec![config],
    };
    let mut routes = Vec::new();
    for host in &hosts {
        let vh_retry = host.get_exact("retry_policy");
        for e in host.entries() {
            if !matches!(e.key.as_str(), "name" | "domains" | "routes" | "retry_policy") {
                out.warn(e.at, &e.key, NOT_MODELLED);
            }
        }
        let Some(list) = host.get_exact("routes") else { continue };
        let Val::Seq(items) = &list.value.v else {
            return Err(at_pos(list.value.at, format!("routes: expected a list, found {}", list.value.kind())));
        };
        for (i, r) in items.iter().enumerate() {
            routes.push(route(r, i, vh_retry, out)?);
        }
    }
    if routes.is_empty() {
        return Err(at_pos(config.at, "nothing to import: no routes in this Envoy route configuration"));
    }
    let chosen = choose(routes, wanted, config.at)?;
    out.instance = wanted.map(str::to_string);
    for r in &chosen {
        route_layers(r, out)?;
    }
    Ok(())
}

/// The routes to import: the one named (`--instance` / `instance:`), or all of them.
pub(super) fn choose<'a>(routes: Vec<Route<'a>>, wanted: Option<&str>, at: Pos) -> Result<Vec<Route<'a>>, ImportError> {
    let Some(w) = wanted else { return Ok(routes) };
    let names: Vec<String> = routes.iter().map(|r| r.class.clone()).collect();
    let one: Vec<Route> = routes.into_iter().filter(|r| r.class == w).collect();
    if one.is_empty() {
        return Err(at_pos(at, format!("no route \"{w}\" in the file (routes: {})", names.join(", "))));
    }
    Ok(one)
}

/// One route: its class name and the entries its layers come from; other keys warned.
fn route<'a>(r: &'a Node, i: usize, vh_retry: Option<&'a Entry>, out: &mut Imported) -> Result<Route<'a>, ImportError> {
    for e in r.entries().iter().filter(|e| !ROUTE.contains(&e.key.as_str())) {
        out.warn(e.at, &e.key, NOT_MODELLED);
    }
    let action = r.get_exact("route");
    if let Some(a) = action {
        for e in a.value.entries() {
            if !matches!(e.key.as_str(), "timeout" | "retry_policy" | "cluster") {
                out.warn(e.at, &e.key, NOT_MODELLED);
            }
        }
    }
    let class = match r.get_exact("name") {
        Some(n) => string(n)?.to_string(),
        None => r
            .get_exact("match")
            .and_then(|m| ["prefix", "path", "path_separated_prefix"].iter().find_map(|k| m.value.get_exact(k)))
            .map(|p| string(p).map(str::to_string))
            .transpose()?
            .unwrap_or_else(|| format!("route{i}")),
    };
    let own = action.and_then(|a| a.value.get_exact("retry_policy"));
    Ok(Route { class, at: r.at, timeout: action.and_then(|a| a.value.get_exact("timeout")), retry: own.or(vh_retry) })
}

/// The layers of one Envoy route, outermost first.
fn route_layers(r: &Route, out: &mut Imported) -> Result<(), ImportError> {
    let what = |part: &str| format!("Envoy route \"{}\" {part}", r.class);
    let mut layers = Vec::new();
    let timeout = match r.timeout {
        Some(e) => envoy_duration(e).map(|t| (t, out.origin(e.at, &e.key)))?,
        None => (15 * SECOND, "Envoy's default route timeout 15s".to_string()),
    };
    if timeout.0 > 0 {
        layers.push(timeout_layer(timeout.0, timeout.1, what("timeout")));
    }
    if let Some(p) = r.retry {
        let (retry, per_try) = retry_policy(p, out)?;
        if let Some(retry) = retry {
            layers.push(OutLayer { what: what("retry_policy"), ..retry });
            if let Some((t, origin)) = per_try {
                layers.push(timeout_layer(t, origin, what("per_try_timeout")));
            }
        }
    }
    for l in layers {
        out.layers.push(OutLayer { classes: vec![r.class.clone()], ..l });
    }
    Ok(())
}

/// A `Timeout` layer of `t`.
pub(super) fn timeout_layer(t: Time, origin: String, what: String) -> OutLayer {
    OutLayer {
        policy: "Timeout",
        what,
        fields: vec![Field { name: "timeout", value: dur(t), origin, at: None }],
        classes: Vec::new(),
    }
}

/// A per-try timeout and where it came from.
pub(super) type PerTry = Option<(Time, String)>;

/// An Envoy `retry_policy`: the `Retry` layer (None when it never retries) and the per-try
/// timeout.
fn retry_policy(p: &Entry, out: &mut Imported) -> Result<(Option<OutLayer>, PerTry), ImportError> {
    for e in p.value.entries() {
        if let Some((_, why)) = RETRY_WARN.iter().find(|(k, _)| *k == e.key) {
            out.warn(e.at, &e.key, *why);
        } else if !RETRY_POLICY.contains(&e.key.as_str()) {
            out.warn(e.at, &e.key, NOT_MODELLED);
        }
    }
    let get = |k: &str| p.value.get_exact(k);
    let retries = get("num_retries").map(|e| int(e, 0, i64::from(u32::MAX) - 1)).transpose()?.unwrap_or(1);
    let mut fields = Vec::new();
    let attempts = (retries + 1).to_string();
    match get("num_retries") {
        Some(e) => fields.push(Field { name: "max_attempts", value: attempts, origin: plus_one(out, e), at: None }),
        None => fields.push(Field {
            name: "max_attempts",
            value: attempts,
            origin: "Envoy's default num_retries 1, plus the first call".into(),
            at: None,
        }),
    }
    // retry_back_off: base 25 ms, max 10 x base (RetryStateImpl's constructor).
    let back = get("retry_back_off");
    let base_e = back.and_then(|b| b.value.get_exact("base_interval"));
    let max_e = back.and_then(|b| b.value.get_exact("max_interval"));
    if let Some(b) = back {
        for e in b.value.entries().iter().filter(|e| !matches!(e.key.as_str(), "base_interval" | "max_interval")) {
            out.warn(e.at, &e.key, NOT_MODELLED);
        }
        if base_e.is_none() {
            return Err(at_pos(b.value.at, "retry_back_off: base_interval is required"));
        }
    }
    let base = base_e.map(envoy_duration).transpose()?.unwrap_or(25 * MILLISECOND);
    if base == 0 {
        let e = base_e.expect("0 comes from the file");
        return Err(at_pos(e.value.at, "base_interval: must be > 0"));
    }
    let max = max_e.map(envoy_duration).transpose()?.unwrap_or(base.saturating_mul(10));
    if max < base {
        let e = max_e.expect("only a given max can be below base");
        return Err(at_pos(e.value.at, "max_interval: must be >= base_interval"));
    }
    let cite = |e: Option<&Entry>, default: &str| e.map_or_else(|| default.to_string(), |e| out.origin(e.at, &e.key));
    fields.push(Field {
        name: "backoff",
        value: dur(base),
        origin: cite(base_e, "Envoy's default base_interval 25ms"),
        at: None,
    });
    fields.push(Field {
        name: "multiplier",
        value: "2.0".into(),
        origin: "Envoy doubles the backoff interval (JitteredExponentialBackOffStrategy)".into(),
        at: None,
    });
    fields.push(Field {
        name: "max_backoff",
        value: dur(max),
        origin: cite(max_e, "Envoy's default max_interval 10 x base"),
        at: None,
    });
    fields.push(Field {
        name: "jitter",
        value: "1.0".into(),
        origin: "Envoy's full jitter: uniform below the interval".into(),
        at: None,
    });
    let on = retry_on(p, out)?;
    let on_origin =
        get("retry_on").map_or_else(|| "no retry_on: nothing is retried".to_string(), |e| out.origin(e.at, &e.key));
    fields.extend(on.fields(&on_origin));
    let per_try = get("per_try_timeout")
        .map(|e| envoy_duration(e).map(|t| (t, out.origin(e.at, &e.key))))
        .transpose()?
        .filter(|(t, _)| *t > 0);
    if retries == 0 {
        return Ok((None, per_try));
    }
    Ok((Some(OutLayer { policy: "Retry", what: String::new(), fields, classes: Vec::new() }), per_try))
}

fn plus_one(out: &Imported, e: &Entry) -> String {
    format!("{} + the first call", out.origin(e.at, &e.key))
}

/// `retry_on` (a comma-separated string) and `retriable_status_codes`: unknown values refused,
/// values with no meaning here warned.
fn retry_on(p: &Entry, out: &mut Imported) -> Result<RetryOn, ImportError> {
    let mut on = RetryOn::default();
    let mut codes_wanted = false;
    if let Some(e) = p.value.get_exact("retry_on") {
        for v in string(e)?.split(',').map(str::trim).filter(|v| !v.is_empty()) {
            match retry_on_value(v) {
                Some(Ok(r)) => on = on | r,
                Some(Err(why)) => out.warn(e.value.at, v, format!("retry_on {v}: {why}")),
                None => {
                    return Err(at_pos(e.value.at, format!("retry_on: unknown value \"{v}\" (Envoy refuses it)")));
                }
            }
            codes_wanted |= v == "retriable-status-codes";
        }
    }
    if let Some(e) = p.value.get_exact("retriable_status_codes") {
        let Val::Seq(items) = &e.value.v else {
            return Err(at_pos(
                e.value.at,
                format!("retriable_status_codes: expected a list, found {}", e.value.kind()),
            ));
        };
        for n in items {
            let code = int(&Entry { key: e.key.clone(), at: n.at, value: n.clone() }, 100, 599)?;
            if !codes_wanted {
                continue; // read only under retriable-status-codes (wouldRetryFromHeaders)
            }
            match status_code(code) {
                Ok(r) => on = on | r,
                Err(why) => out.warn(n.at, &code.to_string(), format!("retriable status {code}: {why}")),
            }
        }
        if !codes_wanted {
            out.warn(e.at, &e.key, "read only with retry_on retriable-status-codes: nothing is retried for it");
        }
    }
    Ok(on)
}
