//! Istio `VirtualService`: each `spec.http[]` route is one class (named by its `name`, else
//! its first match's `uri` prefix or exact path) and imports as layers for that class alone:
//! `timeout` as a `Timeout` outside the retry (Istio's default: none), `retries` as a
//! `Retry` and `retries.perTryTimeout` as a `Timeout` inside it.
//!
//! Istio writes the Envoy retry policy (`pilot/pkg/networking/core/route/retry/retry.go`,
//! `ConvertPolicy`): without `retries`, its default policy, 2 retries on
//! `connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes` (no status
//! code, so in brownout's terms nothing it simulates is retried); `attempts` 0 turns retries
//! off; `retryOn` replaces the default list, numbers in it being status codes. The values then
//! mean what they mean to Envoy (see `envoy_route`).

use super::ImportError;
use super::emit::{Field, Imported, OutLayer, dur};
use super::envoy_route::{PerTry, RetryOn, Route, choose, retry_on_value, status_code, timeout_layer};
use super::read::{go_duration, int, string};
use super::tree::{Entry, Node, Pos, Val, at_pos};
use crate::engine::MILLISECOND;

const NOT_MODELLED: &str = "not a setting brownout models: not imported";

/// Istio's default `retryOn` (`retry.go`, `defaultRetryOn`).
const DEFAULT_RETRY_ON: &str = "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes";

const HTTP_ROUTE: &[&str] = &["name", "match", "route", "timeout", "retries"];
const RETRIES: &[&str] = &["attempts", "perTryTimeout", "retryOn", "backoff"];

/// Whether `root` is an Istio `VirtualService`.
pub(super) fn is_virtual_service(root: &Node) -> bool {
    root.get_exact("kind").is_some_and(|k| matches!(&k.value.v, Val::Str(s) if s == "VirtualService"))
}

pub(crate) fn import(root: &Node, wanted: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let spec = root.get_exact("spec").ok_or_else(|| at_pos(root.at, "a VirtualService without spec"))?;
    for e in spec.value.entries().iter().filter(|e| !matches!(e.key.as_str(), "http" | "hosts" | "gateways")) {
        out.warn(e.at, &e.key, "only HTTP routes are imported: not imported");
    }
    let Some(http) = spec.value.get_exact("http") else {
        return Err(at_pos(spec.at, "nothing to import: no http routes in this VirtualService"));
    };
    let Val::Seq(items) = &http.value.v else {
        return Err(at_pos(http.value.at, format!("http: expected a list, found {}", http.value.kind())));
    };
    let mut routes = Vec::new();
    for (i, r) in items.iter().enumerate() {
        for e in r.entries().iter().filter(|e| !HTTP_ROUTE.contains(&e.key.as_str())) {
            out.warn(e.at, &e.key, NOT_MODELLED);
        }
        routes.push(Route {
            class: class_of(r, i)?,
            at: r.at,
            timeout: r.get_exact("timeout"),
            retry: r.get_exact("retries"),
        });
    }
    let chosen = choose(routes, wanted, http.at)?;
    out.instance = wanted.map(str::to_string);
    for r in &chosen {
        route_layers(r, out)?;
    }
    Ok(())
}

/// `name`, else the first match's `uri` prefix or exact path, else `http{i}`.
fn class_of(r: &Node, i: usize) -> Result<String, ImportError> {
    if let Some(n) = r.get_exact("name") {
        return Ok(string(n)?.to_string());
    }
    let first = r.get_exact("match").and_then(|m| match &m.value.v {
        Val::Seq(v) => v.first(),
        _ => None,
    });
    let uri = first.and_then(|m| m.get_exact("uri"));
    let path = uri.and_then(|u| u.value.get_exact("prefix").or_else(|| u.value.get_exact("exact")));
    Ok(match path {
        Some(p) => string(p)?.to_string(),
        None => format!("http{i}"),
    })
}

fn route_layers(r: &Route, out: &mut Imported) -> Result<(), ImportError> {
    let what = |part: &str| format!("Istio http route \"{}\" {part}", r.class);
    let mut layers = Vec::new();
    if let Some(e) = r.timeout {
        let t = go_duration(e)?;
        if t > 0 {
            layers.push(timeout_layer(t, out.origin(e.at, &e.key), what("timeout")));
        }
    }
    let (retry, per_try) = retries(r.retry, r.at, out)?;
    if let Some(retry) = retry {
        layers.push(OutLayer { what: what("retries"), ..retry });
        if let Some((t, origin)) = per_try {
            layers.push(timeout_layer(t, origin, what("retries.perTryTimeout")));
        }
    }
    for l in layers {
        out.layers.push(OutLayer { classes: vec![r.class.clone()], ..l });
    }
    Ok(())
}

/// `retries` as Istio converts it (`ConvertPolicy`), None for its default policy.
fn retries(e: Option<&Entry>, route: Pos, out: &mut Imported) -> Result<(Option<OutLayer>, PerTry), ImportError> {
    let get = |k: &str| e.and_then(|e| e.value.get_exact(k));
    if let Some(e) = e {
        for x in e.value.entries() {
            if !RETRIES.contains(&x.key.as_str()) {
                out.warn(x.at, &x.key, NOT_MODELLED);
            }
        }
    }
    let attempts = match get("attempts") {
        Some(a) => {
            let n = int(a, 0, i64::from(i32::MAX))?;
            if n == 0 {
                return Ok((None, None)); // "Configuration is explicitly disabling the retry policy"
            }
            (n, format!("{} + the first call", out.origin(a.at, &a.key)))
        }
        None if e.is_some() => (2, "Istio's default attempts 2, plus the first call".into()),
        None => (2, "no retries: Istio's default policy, 2 retries, plus the first call".into()),
    };
    let mut fields =
        vec![Field { name: "max_attempts", value: (attempts.0 + 1).to_string(), origin: attempts.1, at: None }];
    let base = get("backoff").map(go_duration).transpose()?.unwrap_or(25 * MILLISECOND);
    if base == 0 {
        let b = get("backoff").expect("0 comes from the file");
        return Err(at_pos(b.value.at, "backoff: must be > 0"));
    }
    let cite = get("backoff").map_or_else(|| "Envoy's default base_interval 25ms".into(), |b| out.origin(b.at, &b.key));
    fields.push(Field { name: "backoff", value: dur(base), origin: cite, at: None });
    fields.push(Field {
        name: "multiplier",
        value: "2.0".into(),
        origin: "Envoy doubles the interval".into(),
        at: None,
    });
    fields.push(Field {
        name: "max_backoff",
        value: dur(base.saturating_mul(10)),
        origin: "Envoy's default max_interval 10 x base".into(),
        at: None,
    });
    fields.push(Field { name: "jitter", value: "1.0".into(), origin: "Envoy's full jitter".into(), at: None });
    let (on, origin) = match get("retryOn") {
        Some(x) => (retry_on(string(x)?, x, out)?, out.origin(x.at, &x.key)),
        None => {
            let why = format!(
                "Istio's default retryOn {DEFAULT_RETRY_ON} names connection failures, refused streams and gRPC \
                 statuses, none of which brownout tells apart from other failures: nothing is retried"
            );
            out.warn(e.map_or(route, |e| e.at), "retryOn", why);
            (RetryOn::default(), format!("Istio's default retryOn {DEFAULT_RETRY_ON}"))
        }
    };
    fields.extend(on.fields(&origin));
    let per_try = get("perTryTimeout")
        .map(|x| go_duration(x).map(|t| (t, out.origin(x.at, &x.key))))
        .transpose()?
        .filter(|(t, _)| *t > 0);
    Ok((Some(OutLayer { policy: "Retry", what: String::new(), fields, classes: Vec::new() }), per_try))
}

/// Istio's `retryOn`: Envoy's values and status codes (numbers), comma-separated
/// (`retry.go`, `parseRetryOn`); an unknown value is refused.
fn retry_on(text: &str, x: &Entry, out: &mut Imported) -> Result<RetryOn, ImportError> {
    let mut on = RetryOn::default();
    for v in text.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let r = match v.parse::<i64>() {
            Ok(code) if (100..=599).contains(&code) => status_code(code),
            Ok(_) => return Err(at_pos(x.value.at, format!("retryOn: {v} is not an HTTP status code"))),
            Err(_) => match retry_on_value(v) {
                Some(r) => r,
                None => return Err(at_pos(x.value.at, format!("retryOn: unknown value \"{v}\" (Istio refuses it)"))),
            },
        };
        match r {
            Ok(r) => on = on | r,
            Err(why) => out.warn(x.value.at, v, format!("retryOn {v}: {why}")),
        }
    }
    Ok(on)
}
