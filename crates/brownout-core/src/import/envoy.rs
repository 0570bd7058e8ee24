//! Envoy clusters (`circuit_breakers.thresholds`, `outlier_detection`; a single cluster, a
//! bootstrap's `static_resources.clusters` or a `clusters` list) and Istio `DestinationRule`s
//! (`spec.trafficPolicy.connectionPool` and `outlierDetection`, with Istio's names and the
//! values Istio gives Envoy).

use super::ImportError;
use super::emit::{Field, Imported, OutLayer, Snippet, Warning};
use super::read::{Known, Section, choice, envoy_duration, go_duration, int, num, string};
use super::tree::{Entry, Node, Val, at_pos, yaml};
use crate::engine::fmt_time;

const NOT_MODELLED: &str = "not a setting brownout models: not imported";
const OUTLIER_PLACE: &str = "the dependency's `replicas:` (outlier detection ejects replicas)";

const THRESHOLD: &[(&str, Known)] = &[
    ("priority", Known::Read),
    ("max_connections", Known::Read),
    ("max_pending_requests", Known::Read),
    ("max_requests", Known::Read),
    ("max_retries", Known::Read),
    ("retry_budget", Known::Warn("a retry budget on the threshold is not modelled: max_retries alone limits retries")),
    ("track_remaining", Known::Warn("observability only: nothing to simulate")),
    ("max_connection_pools", Known::Warn("brownout has one connection pool per instance")),
];

const CIRCUIT_BREAKERS: &[(&str, Known)] =
    &[("thresholds", Known::Read), ("per_host_thresholds", Known::Warn("per-host thresholds are not modelled"))];

const U32: i64 = u32::MAX as i64;

/// Envoy `outlier_detection` fields: (name, kind); kind `d` = duration, `n` = number.
const OUTLIER: &[(&str, char)] = &[
    ("consecutive_5xx", 'n'),
    ("consecutive_gateway_failure", 'n'),
    ("interval", 'd'),
    ("base_ejection_time", 'd'),
    ("max_ejection_time", 'd'),
    ("max_ejection_percent", 'p'),
    ("enforcing_consecutive_5xx", 'p'),
    ("enforcing_consecutive_gateway_failure", 'p'),
    ("enforcing_success_rate", 'p'),
    ("success_rate_minimum_hosts", 'n'),
    ("success_rate_request_volume", 'n'),
    ("success_rate_stdev_factor", 'n'),
];

const OUTLIER_OTHER: &[(&str, &str)] = &[
    ("split_external_local_origin_errors", "local-origin errors are not told apart"),
    ("consecutive_local_origin_failure", "local-origin errors are not told apart"),
    ("enforcing_consecutive_local_origin_failure", "local-origin errors are not told apart"),
    ("enforcing_local_origin_success_rate", "local-origin errors are not told apart"),
    ("failure_percentage_threshold", "failure-percentage ejection is not modelled"),
    ("enforcing_failure_percentage", "failure-percentage ejection is not modelled"),
    ("enforcing_failure_percentage_local_origin", "failure-percentage ejection is not modelled"),
    ("failure_percentage_minimum_hosts", "failure-percentage ejection is not modelled"),
    ("failure_percentage_request_volume", "failure-percentage ejection is not modelled"),
    ("max_ejection_time_jitter", "ejection times are not jittered"),
    ("successful_active_health_check_uneject_host", "active health checks are not modelled"),
    ("always_eject_one_host", "max_ejection_percent alone bounds ejections"),
    ("monitors", "outlier-detection extensions are not modelled"),
    ("detect_degraded_hosts", "degraded hosts are not modelled"),
];

pub(crate) fn import(text: &str, instance: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let (root, more) = yaml(text)?;
    if let Some(at) = more {
        out.warn(at, "---", "only the first YAML document is read");
    }
    if root.get_exact("kind").is_some_and(|k| matches!(&k.value.v, Val::Str(s) if s == "DestinationRule")) {
        return istio(&root, instance, out);
    }
    if super::istio::is_virtual_service(&root) {
        return super::istio::import(&root, instance, out);
    }
    if super::envoy_route::is_route_config(&root) {
        return super::envoy_route::import(&root, instance, out);
    }
    let clusters: Vec<&Node> = match root.get_exact("static_resources").and_then(|s| s.value.get_exact("clusters")) {
        Some(c) => items(&c.value),
        None => match root.get_exact("clusters") {
            Some(c) => items(&c.value),
            None => vec![&root],
        },
    };
    let name_of = |c: &Node| c.get_exact("name").and_then(|n| string(n).ok().map(str::to_string));
    let names: Vec<String> = clusters.iter().map(|c| name_of(c).unwrap_or_default()).collect();
    let cluster = match instance {
        Some(w) => clusters.iter().find(|c| name_of(c).as_deref() == Some(w)).copied().ok_or_else(|| {
            at_pos(root.at, format!("no cluster \"{w}\" in the file (clusters: {})", names.join(", ")))
        })?,
        None if clusters.len() == 1 => clusters[0],
        None => {
            return Err(at_pos(
                root.at,
                format!("the file has {} clusters ({}): name one (--instance)", clusters.len(), names.join(", ")),
            ));
        }
    };
    out.instance = name_of(cluster);
    cluster_layers(cluster, out)?;
    if out.layers.is_empty() && out.snippets.is_empty() {
        return Err(at_pos(
            cluster.at,
            "nothing to import: no circuit_breakers or outlier_detection in this Envoy cluster \
             (nor an Istio DestinationRule's trafficPolicy)",
        ));
    }
    Ok(())
}

fn items(n: &Node) -> Vec<&Node> {
    match &n.v {
        Val::Seq(v) => v.iter().collect(),
        _ => vec![n],
    }
}

fn cluster_layers(cluster: &Node, out: &mut Imported) -> Result<(), ImportError> {
    let mut panic_threshold = None;
    for e in cluster.entries() {
        match e.key.as_str() {
            "name" => {}
            "circuit_breakers" => {
                let s = Section::merged("Envoy circuit_breakers", &[&e.value]);
                s.check(CIRCUIT_BREAKERS, &mut out.warnings)?;
                if let Some(t) = s.get("thresholds") {
                    let value = thresholds(t, out)?;
                    let fields = vec![value];
                    out.layers.push(OutLayer {
                        policy: "EnvoyThresholds",
                        what: "Envoy circuit_breakers".into(),
                        fields,
                        classes: Vec::new(),
                    });
                }
            }
            "outlier_detection" => {
                let fields = outlier(&e.value, out)?;
                out.snippets.push(Snippet { field: "outlier_detection", place: OUTLIER_PLACE, fields });
            }
            "common_lb_config" => {
                for x in e.value.entries() {
                    if x.key == "healthy_panic_threshold" {
                        panic_threshold = Some(x);
                    } else {
                        out.warn(x.at, &x.key, NOT_MODELLED);
                    }
                }
            }
            _ => out.warn(e.at, &e.key, NOT_MODELLED),
        }
    }
    if let Some(x) = panic_threshold {
        // `type.v3.Percent` (a double), which Envoy rounds to a whole percent
        // (PROTOBUF_PERCENT_TO_ROUNDED_INTEGER_OR_DEFAULT).
        let v = num(x, |v| (0.0..=100.0).contains(&v), "[0, 100]")?.round() as u32;
        match out.snippets.iter_mut().find(|s| s.field == "outlier_detection") {
            Some(sn) => {
                let origin = format!("{}:{} {}", out.label, x.at.line, x.key);
                sn.fields.push(Field { at: None, name: "healthy_panic_threshold", value: v.to_string(), origin });
            }
            None => out.warn(x.at, &x.key, "no outlier detection to panic from: not imported"),
        }
    }
    Ok(())
}

/// `thresholds: [..]` as one field, each value's line cited in its comment.
fn thresholds(t: &Entry, out: &mut Imported) -> Result<Field, ImportError> {
    let list = match &t.value.v {
        Val::Seq(v) => v,
        _ => return Err(at_pos(t.value.at, format!("thresholds: expected a list, found {}", t.value.kind()))),
    };
    let mut items = Vec::new();
    let mut cited = Vec::new();
    let mut seen = [false; 2];
    for (i, th) in list.iter().enumerate() {
        let s = Section::merged("Envoy circuit_breakers.thresholds", &[th]);
        s.check(THRESHOLD, &mut out.warnings)?;
        let priority = s.get("priority").map(|e| choice(e, &["DEFAULT", "HIGH"])).transpose()?.unwrap_or(0);
        if std::mem::replace(&mut seen[priority], true) {
            // `ClusterInfoImpl::ResourceManagers::load` takes the first entry of a priority
            // (std::find_if): a later one is never read.
            let at = s.get("priority").map_or(th.at, |e| e.at);
            let p = ["DEFAULT", "HIGH"][priority];
            out.warn(
                at,
                "priority",
                format!("a second thresholds entry for {p}: Envoy reads only the first: not imported"),
            );
            continue;
        }
        let mut parts = Vec::new();
        if let Some(e) = s.get("priority") {
            parts.push(format!("priority: {}", ["Default", "High"][priority]));
            cited.push(format!("[{i}].priority l.{}", e.at.line));
        }
        for key in ["max_connections", "max_pending_requests", "max_requests", "max_retries"] {
            if let Some(e) = s.get(key) {
                parts.push(format!("{key}: {}", int(e, 0, U32)?));
                cited.push(format!("[{i}].{key} l.{}", e.at.line));
            }
        }
        items.push(format!("({})", parts.join(", ")));
    }
    let origin = format!("{} thresholds: {}", out.origin(t.at, &t.key), cited.join(", "));
    Ok(Field { at: None, name: "thresholds", value: format!("[{}]", items.join(", ")), origin })
}

fn outlier(n: &Node, out: &mut Imported) -> Result<Vec<Field>, ImportError> {
    let mut fields = Vec::new();
    for e in n.entries() {
        if let Some((name, kind)) = OUTLIER.iter().find(|(k, _)| *k == e.key) {
            let value = match kind {
                'd' => format!("\"{}\"", fmt_time(envoy_duration(e)?)),
                'p' => int(e, 0, 100)?.to_string(),
                _ => int(e, 0, U32)?.to_string(),
            };
            fields.push(Field { at: None, name, value, origin: out.origin(e.at, &e.key) });
        } else if let Some((_, why)) = OUTLIER_OTHER.iter().find(|(k, _)| *k == e.key) {
            out.warn(e.at, &e.key, *why);
        } else {
            let known: Vec<&str> =
                OUTLIER.iter().map(|(k, _)| *k).chain(OUTLIER_OTHER.iter().map(|(k, _)| *k)).collect();
            return Err(at_pos(
                e.at,
                format!("unknown Envoy outlier_detection option \"{}\" (known: {})", e.key, known.join(", ")),
            ));
        }
    }
    Ok(fields)
}

const POOL_TCP: &[(&str, Known)] = &[
    ("maxConnections", Known::Read),
    ("connectTimeout", Known::Warn(NOT_MODELLED)),
    ("tcpKeepalive", Known::Warn(NOT_MODELLED)),
    ("maxConnectionDuration", Known::Warn(NOT_MODELLED)),
    ("idleTimeout", Known::Warn(NOT_MODELLED)),
];
const POOL_HTTP: &[(&str, Known)] = &[
    ("http1MaxPendingRequests", Known::Read),
    ("http2MaxRequests", Known::Read),
    ("maxRetries", Known::Read),
    ("maxRequestsPerConnection", Known::Warn("connection reuse is not modelled")),
    ("idleTimeout", Known::Warn(NOT_MODELLED)),
    ("h2UpgradePolicy", Known::Warn(NOT_MODELLED)),
    ("useClientProtocol", Known::Warn(NOT_MODELLED)),
    ("maxConcurrentStreams", Known::Warn(NOT_MODELLED)),
];
const ISTIO_OUTLIER: &[(&str, Known)] = &[
    ("consecutive5xxErrors", Known::Read),
    ("consecutiveGatewayErrors", Known::Read),
    ("interval", Known::Read),
    ("baseEjectionTime", Known::Read),
    ("maxEjectionPercent", Known::Read),
    ("minHealthPercent", Known::Read),
    ("consecutiveErrors", Known::Warn("deprecated by Istio: use consecutive5xxErrors or consecutiveGatewayErrors")),
    ("consecutiveLocalOriginFailures", Known::Warn("local-origin errors are not told apart")),
    ("splitExternalLocalOriginErrors", Known::Warn("local-origin errors are not told apart")),
];

fn istio(root: &Node, instance: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let name = root.get_exact("metadata").and_then(|m| m.value.get_exact("name")).and_then(|n| string(n).ok());
    if let Some(w) = instance.filter(|w| Some(*w) != name) {
        return Err(at_pos(
            root.at,
            format!("no DestinationRule \"{w}\" in the file (it holds \"{}\")", name.unwrap_or("")),
        ));
    }
    out.instance = name.map(str::to_string);
    let spec = root.get_exact("spec").ok_or_else(|| at_pos(root.at, "a DestinationRule without spec"))?;
    for e in spec.value.entries() {
        if !matches!(e.key.as_str(), "trafficPolicy" | "host") {
            out.warn(e.at, &e.key, "only spec.trafficPolicy is imported");
        }
    }
    let nothing = |at| {
        at_pos(at, "nothing to import: no trafficPolicy.connectionPool or outlierDetection in this DestinationRule")
    };
    let Some(policy) = spec.value.get_exact("trafficPolicy") else { return Err(nothing(spec.at)) };
    for e in policy.value.entries() {
        match e.key.as_str() {
            "connectionPool" => pool(e, out)?,
            "outlierDetection" => istio_outlier(e, out)?,
            _ => out.warn(e.at, &e.key, NOT_MODELLED),
        }
    }
    if out.layers.is_empty() && out.snippets.is_empty() {
        return Err(nothing(policy.at));
    }
    Ok(())
}

/// Istio's connection pool: unset limits are Istio's default 2^32-1 (no limit), spelled out.
fn pool(e: &Entry, out: &mut Imported) -> Result<(), ImportError> {
    let mut warnings: Vec<Warning> = Vec::new();
    let tcp = e.value.get_exact("tcp");
    let http = e.value.get_exact("http");
    for x in e.value.entries().iter().filter(|x| !matches!(x.key.as_str(), "tcp" | "http")) {
        warnings.push(Warning { at: x.at, key: x.key.clone(), message: NOT_MODELLED.into() });
    }
    let tcp_s = Section::merged("Istio connectionPool.tcp", &tcp.map(|t| vec![&t.value]).unwrap_or_default());
    tcp_s.check(POOL_TCP, &mut warnings)?;
    let http_s = Section::merged("Istio connectionPool.http", &http.map(|t| vec![&t.value]).unwrap_or_default());
    http_s.check(POOL_HTTP, &mut warnings)?;
    let mut parts = vec!["priority: Default".to_string()];
    let mut cited = Vec::new();
    for (key, field, s) in [
        ("maxConnections", "max_connections", &tcp_s),
        ("http1MaxPendingRequests", "max_pending_requests", &http_s),
        ("http2MaxRequests", "max_requests", &http_s),
        ("maxRetries", "max_retries", &http_s),
    ] {
        match s.get(key) {
            Some(x) => {
                parts.push(format!("{field}: {}", int(x, 1, U32)?));
                cited.push(format!("{key} l.{}", x.at.line));
            }
            None => {
                parts.push(format!("{field}: {U32}"));
                cited.push(format!("{key} Istio default 2^32-1"));
            }
        }
    }
    out.warnings.extend(warnings);
    let origin = format!("{} {}", out.origin(e.at, &e.key), cited.join(", "));
    let fields = vec![Field { at: None, name: "thresholds", value: format!("[({})]", parts.join(", ")), origin }];
    out.layers.push(OutLayer {
        policy: "EnvoyThresholds",
        what: "Istio trafficPolicy.connectionPool".into(),
        fields,
        classes: Vec::new(),
    });
    Ok(())
}

/// Istio's outlier detection as Istio writes it for Envoy (`cluster_traffic_policy.go`,
/// `applyOutlierDetection`): enforcement 100 % for a positive consecutive count and 0 for a
/// zero one (that detector off), success-rate ejection off, `maxEjectionPercent` only when
/// above 0 (else Envoy's 10 %), and `minHealthPercent` as the cluster's
/// `healthy_panic_threshold`, 0 (panic off) when unset.
fn istio_outlier(e: &Entry, out: &mut Imported) -> Result<(), ImportError> {
    let s = Section::merged("Istio outlierDetection", &[&e.value]);
    s.check(ISTIO_OUTLIER, &mut out.warnings)?;
    let mut fields = Vec::new();
    for (key, field, enforcing) in [
        ("consecutive5xxErrors", "consecutive_5xx", "enforcing_consecutive_5xx"),
        ("consecutiveGatewayErrors", "consecutive_gateway_failure", "enforcing_consecutive_gateway_failure"),
    ] {
        if let Some(x) = s.get(key) {
            let v = int(x, 0, U32)?;
            let origin = out.origin(x.at, &x.key);
            fields.push(Field { at: None, name: field, value: v.to_string(), origin: origin.clone() });
            let on = if v > 0 { 100 } else { 0 };
            fields.push(Field {
                at: None,
                name: enforcing,
                value: on.to_string(),
                origin: format!("{origin} (as Istio sets it)"),
            });
        }
    }
    for (key, field) in [("interval", "interval"), ("baseEjectionTime", "base_ejection_time")] {
        if let Some(x) = s.get(key) {
            let value = format!("\"{}\"", fmt_time(go_duration(x)?));
            fields.push(Field { at: None, name: field, value, origin: out.origin(x.at, &x.key) });
        }
    }
    if let Some(x) = s.get("maxEjectionPercent") {
        let v = int(x, 0, 100)?;
        if v > 0 {
            fields.push(Field {
                at: None,
                name: "max_ejection_percent",
                value: v.to_string(),
                origin: out.origin(x.at, &x.key),
            });
        }
    }
    fields.push(Field {
        at: None,
        name: "enforcing_success_rate",
        value: "0".into(),
        origin: "Istio turns success-rate ejection off".into(),
    });
    let panic = match s.get("minHealthPercent") {
        Some(x) => Field {
            at: None,
            name: "healthy_panic_threshold",
            value: int(x, 0, 100)?.to_string(),
            origin: format!("{} (Envoy's healthy_panic_threshold)", out.origin(x.at, &x.key)),
        },
        None => Field {
            at: None,
            name: "healthy_panic_threshold",
            value: "0".into(),
            origin: "Istio's default minHealthPercent 0: panic off".into(),
        },
    };
    fields.push(panic);
    out.snippets.push(Snippet { field: "outlier_detection", place: OUTLIER_PLACE, fields });
    Ok(())
}
