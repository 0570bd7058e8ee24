//! resilience4j in a Spring Boot `application.yml`: `resilience4j.{circuitbreaker, retry,
//! timelimiter, bulkhead}` with `configs` and `instances`, Spring's relaxed binding.
//!
//! An instance's options are its base config's (`baseConfig`, else for a circuit breaker a
//! config of the instance's own name, else `configs.default`) overridden by its own, as
//! resilience4j-spring-boot merges them. The layers follow Spring's default aspect order:
//! `Retry(CircuitBreaker(TimeLimiter(Bulkhead(call))))`.

use super::ImportError;
use super::emit::{Imported, OutLayer, dur, float};
use super::read::{Fields, Known, Section, boolean, choice, int, num, spring_duration, string, value_at};
use super::tree::{Entry, Node, Pos, Val, at_pos, canon, split_dotted, yaml};
use crate::engine::{MILLISECOND, SECOND, Time};

const PREDICATES: &str = "brownout records every failure (no exception predicates)";
const OBSERVABILITY: &str = "observability only: nothing to simulate";

const CIRCUITBREAKER: &[(&str, Known)] = &[
    ("baseConfig", Known::Read),
    ("failureRateThreshold", Known::Read),
    ("slowCallRateThreshold", Known::Read),
    ("slowCallDurationThreshold", Known::Read),
    ("waitDurationInOpenState", Known::Read),
    ("permittedNumberOfCallsInHalfOpenState", Known::Read),
    ("minimumNumberOfCalls", Known::Read),
    ("slidingWindowSize", Known::Read),
    ("slidingWindowType", Known::Read),
    ("maxWaitDurationInHalfOpenState", Known::Read),
    ("transitionToStateAfterWaitDuration", Known::Read),
    ("automaticTransitionFromOpenToHalfOpenEnabled", Known::Read),
    ("enableExponentialBackoff", Known::Read),
    ("exponentialBackoffMultiplier", Known::Read),
    ("exponentialMaxWaitDurationInOpenState", Known::Read),
    ("enableRandomizedWait", Known::Warn("a randomized open-state wait is not modelled: the wait is not randomized")),
    ("randomizedWaitFactor", Known::Warn("a randomized open-state wait is not modelled: the wait is not randomized")),
    ("recordExceptions", Known::Read),
    ("ignoreExceptions", Known::Read),
    ("recordFailurePredicate", Known::Warn(PREDICATES)),
    ("ignoreExceptionPredicate", Known::Warn(PREDICATES)),
    ("recordResultPredicate", Known::Warn(PREDICATES)),
    ("ignoreClassBindingExceptions", Known::Warn(PREDICATES)),
    ("registerHealthIndicator", Known::Warn(OBSERVABILITY)),
    ("allowHealthIndicatorToFail", Known::Warn(OBSERVABILITY)),
    ("eventConsumerBufferSize", Known::Warn(OBSERVABILITY)),
    ("writableStackTraceEnabled", Known::Warn(OBSERVABILITY)),
];

const RETRY: &[(&str, Known)] = &[
    ("baseConfig", Known::Read),
    ("maxAttempts", Known::Read),
    ("waitDuration", Known::Read),
    ("enableExponentialBackoff", Known::Read),
    ("exponentialBackoffMultiplier", Known::Read),
    ("exponentialMaxWaitDuration", Known::Read),
    ("enableRandomizedWait", Known::Read),
    ("randomizedWaitFactor", Known::Read),
    ("retryExceptions", Known::Read),
    ("ignoreExceptions", Known::Read),
    ("retryExceptionPredicate", Known::Warn("brownout retries every error (and timeouts): no predicates")),
    ("resultPredicate", Known::Warn("brownout retries every error (and timeouts): no predicates")),
    ("intervalBiFunction", Known::Warn("a custom interval function cannot be read from configuration")),
    ("failAfterMaxAttempts", Known::Warn("brownout fails with the last attempt's outcome either way")),
    ("consumeResultBeforeRetryAttempt", Known::Warn("results are not modelled")),
    ("eventConsumerBufferSize", Known::Warn(OBSERVABILITY)),
    ("writableStackTraceEnabled", Known::Warn(OBSERVABILITY)),
];

const TIMELIMITER: &[(&str, Known)] = &[
    ("baseConfig", Known::Read),
    ("timeoutDuration", Known::Read),
    ("cancelRunningFuture", Known::Warn("brownout lets the dependency finish an abandoned call (no cancellation)")),
    ("eventConsumerBufferSize", Known::Warn(OBSERVABILITY)),
];

const BULKHEAD: &[(&str, Known)] = &[
    ("baseConfig", Known::Read),
    ("maxConcurrentCalls", Known::Read),
    ("maxWaitDuration", Known::Read),
    ("fairCallHandlingEnabled", Known::Warn("waiting calls are always served in FIFO order")),
    ("fairCallHandlingStrategyEnabled", Known::Warn("waiting calls are always served in FIFO order")),
    ("eventConsumerBufferSize", Known::Warn(OBSERVABILITY)),
    ("writableStackTraceEnabled", Known::Warn(OBSERVABILITY)),
];

/// The modules read, in Spring's default aspect order (outermost first).
const MODULES: [(&str, &[(&str, Known)]); 4] =
    [("retry", RETRY), ("circuitbreaker", CIRCUITBREAKER), ("timelimiter", TIMELIMITER), ("bulkhead", BULKHEAD)];

/// Top-level `resilience4j` keys with no equivalent.
const OTHER_MODULES: &[(&str, &str)] = &[
    ("ratelimiter", "brownout has no request-rate limiter layer: not imported"),
    ("thread-pool-bulkhead", "a thread-pool bulkhead is not modelled (only the semaphore bulkhead): not imported"),
    ("scheduled", "scheduled executors are not modelled"),
    ("micrometer", OBSERVABILITY),
];

/// Keys of a module besides `configs` and `instances`.
const MODULE_KEYS: &[(&str, Known)] = &[
    ("configs", Known::Read),
    ("instances", Known::Read),
    ("backends", Known::Read),
    ("circuitBreakerAspectOrder", Known::Warn("brownout stacks the layers in Spring's default aspect order")),
    ("retryAspectOrder", Known::Warn("brownout stacks the layers in Spring's default aspect order")),
    ("timeLimiterAspectOrder", Known::Warn("brownout stacks the layers in Spring's default aspect order")),
    ("bulkheadAspectOrder", Known::Warn("brownout stacks the layers in Spring's default aspect order")),
    ("metrics", Known::Warn(OBSERVABILITY)),
    ("tags", Known::Warn(OBSERVABILITY)),
];

pub(crate) fn import(text: &str, instance: Option<&str>, out: &mut Imported) -> Result<(), ImportError> {
    let (root, more) = yaml(text)?;
    let root = split_dotted(root);
    let top = root.get("resilience4j").ok_or_else(|| {
        at_pos(Pos { line: 1, col: 1 }, "no `resilience4j` key: this is not a resilience4j application.yml")
    })?;
    if let Some(at) = more {
        out.warn(at, "---", "only the first YAML document is read (profiles in later documents are not)");
    }
    let modules = read_modules(top, out)?;
    let name = choose_instance(top, &modules, instance)?;
    out.instance = Some(name.clone());
    for (module, node) in &modules {
        let Some(inst) = instances(node).and_then(|i| i.value.get_exact(&name)) else {
            continue;
        };
        let base = base_config(module, node, &inst.value, &name)?;
        let layers: Vec<&Node> = base.into_iter().chain([&inst.value]).collect();
        let section = Section::merged(format!("resilience4j.{module}"), &layers);
        let table = MODULES.iter().find(|(m, _)| m == module).map_or(&[][..], |(_, t)| *t);
        section.check(table, &mut out.warnings)?;
        let layer = match *module {
            "retry" => retry(&section, out)?,
            "circuitbreaker" => breaker(&section, out)?,
            "timelimiter" => timelimiter(&section, out)?,
            _ => bulkhead(&section, out)?,
        };
        out.layers.push(OutLayer { what: format!("resilience4j.{module}.instances.{name}"), ..layer });
    }
    Ok(())
}

/// The modules present, in aspect order; other top-level keys warned or refused.
fn read_modules<'a>(top: &'a Entry, out: &mut Imported) -> Result<Vec<(&'static str, &'a Node)>, ImportError> {
    let mut found = Vec::new();
    for e in top.value.entries() {
        if let Some((m, _)) = MODULES.iter().find(|(m, _)| canon(m) == canon(&e.key)) {
            Section::merged(format!("resilience4j.{m}"), &[&e.value]).check(MODULE_KEYS, &mut out.warnings)?;
            found.push((*m, &e.value));
        } else if let Some((_, why)) = OTHER_MODULES.iter().find(|(m, _)| canon(m) == canon(&e.key)) {
            out.warn(e.at, &e.key, *why);
        } else {
            let known: Vec<&str> =
                MODULES.iter().map(|(m, _)| *m).chain(OTHER_MODULES.iter().map(|(m, _)| *m)).collect();
            return Err(at_pos(
                e.at,
                format!("unknown resilience4j module \"{}\" (known: {})", e.key, known.join(", ")),
            ));
        }
    }
    found.sort_by_key(|(m, _)| MODULES.iter().position(|(x, _)| x == m));
    Ok(found)
}

/// `instances` (or the older `backends`).
fn instances(module: &Node) -> Option<&Entry> {
    module.get("instances").or_else(|| module.get("backends"))
}

/// The instance to import: the one named, or the only one in the file.
fn choose_instance(top: &Entry, modules: &[(&str, &Node)], wanted: Option<&str>) -> Result<String, ImportError> {
    let mut names: Vec<&str> = Vec::new();
    let mut first_at = top.at;
    for (_, m) in modules {
        if let Some(i) = instances(m) {
            if names.is_empty() {
                first_at = i.at;
            }
            for e in i.value.entries() {
                if !names.contains(&e.key.as_str()) {
                    names.push(&e.key);
                }
            }
        }
    }
    match wanted {
        Some(w) if names.contains(&w) => Ok(w.to_string()),
        Some(w) => Err(at_pos(first_at, format!("no instance \"{w}\" in the file (instances: {})", list(&names)))),
        None if names.len() == 1 => Ok(names[0].to_string()),
        None => Err(at_pos(
            first_at,
            format!(
                "the file has {} instances ({}): name one (--instance, or instance: in Import)",
                names.len(),
                list(&names)
            ),
        )),
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

/// The config an instance starts from, as resilience4j-spring-boot picks it.
fn base_config<'a>(module: &str, node: &'a Node, inst: &'a Node, name: &str) -> Result<Option<&'a Node>, ImportError> {
    let configs = node.get("configs").map(|c| &c.value);
    let find = |n: &str| configs.and_then(|c| c.get_exact(n)).map(|e| &e.value);
    if let Some(b) = inst.get("baseConfig") {
        let want = string(b)?;
        return find(want).map(Some).ok_or_else(|| {
            let there: Vec<&str> = configs.map_or(Vec::new(), |c| c.entries().iter().map(|e| e.key.as_str()).collect());
            at_pos(value_at(b), format!("baseConfig \"{want}\": no such config (configs: {})", list(&there)))
        });
    }
    if module == "circuitbreaker"
        && let Some(own) = find(name)
    {
        return Ok(Some(own));
    }
    Ok(find("default"))
}

fn layer(policy: &'static str, f: Fields) -> OutLayer {
    OutLayer { policy, what: String::new(), fields: f.fields, classes: Vec::new() }
}

fn pct(e: &Entry) -> Result<f64, ImportError> {
    num(e, |v| v > 0.0 && v <= 100.0, "(0, 100]")
}

fn breaker(s: &Section, out: &mut Imported) -> Result<OutLayer, ImportError> {
    let counted = breaker_predicates(s, out)?;
    let mut f = Fields::new(out);
    for (name, value, origin) in counted {
        f.note(name, value, origin);
    }
    for key in ["failureRateThreshold", "slowCallRateThreshold"] {
        if let Some(e) = s.get(key) {
            f.from(key, float(pct(e)?), e);
        }
    }
    for key in ["slowCallDurationThreshold", "waitDurationInOpenState"] {
        if let Some(e) = s.get(key) {
            f.from(key, dur(positive(e)?), e);
        }
    }
    for key in ["permittedNumberOfCallsInHalfOpenState", "minimumNumberOfCalls", "slidingWindowSize"] {
        if let Some(e) = s.get(key) {
            f.from(key, int(e, 1, i64::from(i32::MAX))?.to_string(), e);
        }
    }
    if let Some(e) = s.get("slidingWindowType") {
        let v = ["COUNT_BASED", "TIME_BASED"][choice(e, &["COUNT_BASED", "TIME_BASED"])?];
        f.from("slidingWindowType", v.into(), e);
    }
    if let Some(e) = s.get("maxWaitDurationInHalfOpenState") {
        f.from("maxWaitDurationInHalfOpenState", dur(spring_duration(e)?), e);
    }
    if let Some(e) = s.get("transitionToStateAfterWaitDuration") {
        let v = ["OPEN", "CLOSED"][choice(e, &["OPEN", "CLOSED"])?];
        f.from("transitionToStateAfterWaitDuration", v.into(), e);
    }
    if let Some(e) = s.get("automaticTransitionFromOpenToHalfOpenEnabled") {
        f.from("automaticTransitionFromOpenToHalfOpenEnabled", boolean(e)?.to_string(), e);
    }
    if let Some(e) = s.get("enableExponentialBackoff").filter(|e| boolean(e) == Ok(true)) {
        let initial = s.get("waitDurationInOpenState").map_or(Ok(60 * SECOND), positive)?;
        let mult = s.get("exponentialBackoffMultiplier").map_or(Ok(1.5), |m| num(m, |v| v >= 1.0, ">= 1"))?;
        let max = s.get("exponentialMaxWaitDurationInOpenState").map(positive).transpose()?;
        let max = max.map(|m| format!(", maxInterval: {}", dur(m))).unwrap_or_default();
        let v = format!("ExponentialBackoff(initialInterval: {}, multiplier: {}{max})", dur(initial), float(mult));
        f.from("waitIntervalFunctionInOpenState", v, e);
    } else if let Some(e) = s.get("enableExponentialBackoff") {
        boolean(e)?;
    }
    Ok(layer("Resilience4j", f))
}

fn positive(e: &Entry) -> Result<Time, ImportError> {
    let ns = spring_duration(e)?;
    if ns == 0 {
        return Err(at_pos(value_at(e), format!("{}: must be > 0", e.key)));
    }
    Ok(ns)
}

fn retry(s: &Section, out: &mut Imported) -> Result<OutLayer, ImportError> {
    let predicates = retry_predicates(s, out)?;
    let mut f = Fields::new(out);
    match s.get("maxAttempts") {
        Some(e) => f.from("max_attempts", int(e, 1, i64::from(i32::MAX))?.to_string(), e),
        None => f.note("max_attempts", "3".into(), "resilience4j default maxAttempts"),
    }
    let wait = s.get("waitDuration").map(spring_duration).transpose()?.unwrap_or(500 * MILLISECOND);
    let exponential = s.get("enableExponentialBackoff").map(boolean).transpose()?.unwrap_or(false);
    let randomized = s.get("enableRandomizedWait").map(boolean).transpose()?.unwrap_or(false);
    let factor = match s.get("randomizedWaitFactor") {
        Some(e) if randomized => num(e, |v| (0.0..1.0).contains(&v), "[0, 1)")?,
        // Read by nobody while randomized waits are off, resilience4j included.
        Some(e) => num(e, |v| (0.0..1.0).contains(&v), "[0, 1)").map(|_| 0.0)?,
        None if randomized => 0.5,
        None => 0.0,
    };
    // Uniform in [d(1-f), d(1+f)] is brownout's jitter j = 2f/(1+f) on a delay d(1+f).
    let scale = 1.0 + factor;
    let origin = |key: &str, default: &str| match s.get(key) {
        Some(e) => out.origin(e.at, &e.key),
        None => format!("resilience4j default {key} {default}"),
    };
    let scaled = if factor > 0.0 { " x (1 + randomizedWaitFactor): resilience4j spreads it ±factor" } else { "" };
    f.note(
        "backoff",
        dur((wait as f64 * scale).round() as Time),
        format!("{}{scaled}", origin("waitDuration", "500ms")),
    );
    if exponential {
        let mult = s.get("exponentialBackoffMultiplier").map_or(Ok(1.5), |m| num(m, |v| v >= 1.0, ">= 1"))?;
        f.note("multiplier", float(mult), origin("exponentialBackoffMultiplier", "1.5"));
        if let Some(e) = s.get("exponentialMaxWaitDuration") {
            let max = spring_duration(e)?;
            f.note(
                "max_backoff",
                dur((max as f64 * scale).round() as Time),
                format!("{}{scaled}", out.origin(e.at, &e.key)),
            );
        }
    }
    if factor > 0.0 {
        let jitter = 2.0 * factor / (1.0 + factor);
        f.note("jitter", float(jitter), format!("{}: 2f/(1+f)", origin("randomizedWaitFactor", "0.5")));
    }
    for (name, value, origin) in predicates {
        f.note(name, value, origin);
    }
    Ok(layer("Retry", f))
}

/// `recordExceptions` / `ignoreExceptions` of a circuit breaker, per kind of failure:
/// ignored first, then recorded (every exception when `recordExceptions` is empty), else a
/// success (resilience4j-circuitbreaker `CircuitBreakerStateMachine.handleThrowable`;
/// `CircuitBreakerConfig.Builder.createRecordExceptionPredicate`).
fn breaker_predicates(s: &Section, out: &mut Imported) -> Result<Vec<(&'static str, String, String)>, ImportError> {
    let record = s.get("recordExceptions");
    let ignore = s.get("ignoreExceptions");
    let recorded = record.map(|e| exception_list(e, out)).transpose()?;
    let ignored = ignore.map(|e| exception_list(e, out)).transpose()?.unwrap_or_default();
    let cite: Vec<String> = [record, ignore].into_iter().flatten().map(|e| out.origin(e.at, &e.key)).collect();
    let origin = format!("{} (resilience4j CircuitBreakerStateMachine.handleThrowable)", cite.join(", "));
    let mut f = Vec::new();
    for (t, name) in [(Error, "errorsAs"), (Timeout, "timeoutsAs")] {
        let counted = if ignored.contains(&t) {
            "Ignored"
        } else if recorded.as_ref().is_none_or(|l| l.contains(&t)) {
            continue; // a failure: the preset's default
        } else {
            "Success"
        };
        f.push((name, counted.to_string(), origin.clone()));
    }
    Ok(f)
}

/// A failure brownout simulates, as a Java client sees it: the exceptions each is thrown as.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Thrown {
    /// A failed call: a 5xx answer (Spring's `HttpServerErrorException`) or an I/O failure
    /// (`java.io.IOException`).
    Error,
    /// The `TimeLimiter`'s `java.util.concurrent.TimeoutException`.
    Timeout,
    /// The dependency's 503 without service (`HttpServerErrorException.ServiceUnavailable`).
    Dependency503,
    /// An open breaker's `CallNotPermittedException`.
    Layer503,
    /// A full bulkhead's `BulkheadFullException` (or a rate limiter's `RequestNotPermitted`).
    Layer429,
}

use Thrown::{Dependency503, Error, Layer429, Layer503, Timeout};

const EVERY: &[Thrown] = &[Error, Timeout, Dependency503, Layer503, Layer429];

/// Exception classes a list may name and the failures each matches: a failure matches a
/// listed class when an exception it is thrown as is that class or a subclass
/// (`exClass.isAssignableFrom(e.getClass())`, resilience4j-core `PredicateCreator.makePredicate`).
const EXCEPTIONS: &[(&str, &[Thrown])] = &[
    ("java.lang.Throwable", EVERY),
    ("java.lang.Exception", EVERY),
    // TimeoutException and IOException are checked; Spring's and resilience4j's are not.
    ("java.lang.RuntimeException", &[Error, Dependency503, Layer503, Layer429]),
    ("java.io.IOException", &[Error]),
    ("java.util.concurrent.TimeoutException", &[Timeout]),
    ("org.springframework.core.NestedRuntimeException", &[Error, Dependency503]),
    ("org.springframework.web.client.RestClientException", &[Error, Dependency503]),
    ("org.springframework.web.client.RestClientResponseException", &[Error, Dependency503]),
    ("org.springframework.web.client.HttpStatusCodeException", &[Error, Dependency503]),
    ("org.springframework.web.client.HttpServerErrorException", &[Error, Dependency503]),
    ("org.springframework.web.client.HttpServerErrorException$ServiceUnavailable", &[Dependency503]),
    ("org.springframework.web.client.HttpServerErrorException.ServiceUnavailable", &[Dependency503]),
    ("io.github.resilience4j.circuitbreaker.CallNotPermittedException", &[Layer503]),
    ("io.github.resilience4j.bulkhead.BulkheadFullException", &[Layer429]),
    ("io.github.resilience4j.ratelimiter.RequestNotPermitted", &[Layer429]),
];

const ASSUMED: &str = "not an exception brownout raises (a failed call is thrown as java.io.IOException or \
    HttpServerErrorException, a timeout as java.util.concurrent.TimeoutException, an open breaker as \
    CallNotPermittedException, a full bulkhead as BulkheadFullException): assumed to match none of its failures";

/// An exception list (a YAML list, or Spring's comma-separated string): the failures its
/// classes match; unknown classes are warned at their position and match nothing.
fn exception_list(e: &Entry, out: &mut Imported) -> Result<Vec<Thrown>, ImportError> {
    let mut names: Vec<(String, Pos)> = Vec::new();
    match &e.value.v {
        Val::Seq(items) => {
            for n in items {
                match &n.v {
                    Val::Str(s) => names.push((s.trim().to_string(), n.at)),
                    _ => return Err(at_pos(n.at, format!("{}: expected a class name, found {}", e.key, n.kind()))),
                }
            }
        }
        Val::Str(s) => names.extend(s.split(',').map(|x| (x.trim().to_string(), e.value.at))),
        _ => {
            return Err(at_pos(
                e.value.at,
                format!("{}: expected a list of class names, found {}", e.key, e.value.kind()),
            ));
        }
    }
    let mut matched = Vec::new();
    for (name, at) in names.into_iter().filter(|(n, _)| !n.is_empty()) {
        match EXCEPTIONS.iter().find(|(n, _)| *n == name) {
            Some((_, m)) => matched.extend_from_slice(m),
            None => out.warn(at, &name, format!("{} in {}: {ASSUMED}", name, e.key)),
        }
    }
    Ok(matched)
}

/// `retryExceptions` / `ignoreExceptions` as the retry predicates. resilience4j retries an
/// exception when it matches `retryExceptions` (every exception when the list is empty) and
/// no class of `ignoreExceptions`: ignoring wins (resilience4j-retry
/// `RetryConfig.Builder.createExceptionPredicate`). Its default, no lists, retries every
/// exception, an open breaker's and a full bulkhead's too.
fn retry_predicates(s: &Section, out: &mut Imported) -> Result<Vec<(&'static str, String, String)>, ImportError> {
    let mut f = Vec::new();
    let retry = s.get("retryExceptions");
    let ignore = s.get("ignoreExceptions");
    let listed = retry.map(|e| exception_list(e, out)).transpose()?;
    let ignored = ignore.map(|e| exception_list(e, out)).transpose()?.unwrap_or_default();
    let retried = |t: Thrown| listed.as_ref().is_none_or(|l| l.contains(&t)) && !ignored.contains(&t);
    let cite: Vec<String> = [retry, ignore].into_iter().flatten().map(|e| out.origin(e.at, &e.key)).collect();
    let origin = if cite.is_empty() {
        "resilience4j retries every exception when no list is given".to_string()
    } else {
        format!("{} (resilience4j RetryConfig.createExceptionPredicate)", cite.join(", "))
    };
    if !retried(Error) {
        f.push(("on_error", "false".into(), origin.clone()));
    }
    if !retried(Timeout) {
        f.push(("on_timeout", "false".into(), origin.clone()));
    }
    let refusals: Vec<&str> = [(Layer429, "Layer429"), (Layer503, "Layer503"), (Dependency503, "Dependency503")]
        .into_iter()
        .filter(|(t, _)| retried(*t))
        .map(|(_, n)| n)
        .collect();
    if refusals != ["Dependency503"] {
        f.push(("on_refusal", format!("[{}]", refusals.join(", ")), origin));
    }
    Ok(f)
}

fn timelimiter(s: &Section, out: &Imported) -> Result<OutLayer, ImportError> {
    let mut f = Fields::new(out);
    match s.get("timeoutDuration") {
        Some(e) => f.from("timeout", dur(positive(e)?), e),
        None => f.note("timeout", dur(SECOND), "resilience4j default timeoutDuration"),
    }
    Ok(layer("Timeout", f))
}

fn bulkhead(s: &Section, out: &Imported) -> Result<OutLayer, ImportError> {
    let mut f = Fields::new(out);
    match s.get("maxConcurrentCalls") {
        Some(e) => f.from("permits", int(e, 1, i64::from(i32::MAX))?.to_string(), e),
        None => f.note("permits", "25".into(), "resilience4j default maxConcurrentCalls"),
    }
    if let Some(e) = s.get("maxWaitDuration") {
        let wait = spring_duration(e)?;
        if wait > 0 {
            f.from("max_wait", dur(wait), e);
            f.note("queue", u32::MAX.to_string(), "resilience4j does not bound the calls waiting");
        }
    }
    Ok(layer("Limiter", f))
}
