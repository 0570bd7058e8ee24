//! `brownout calibrate prometheus FILE... --class NAME=SELECTOR ... --out DIR` and
//! `brownout calibrate otlp FILE... --out DIR`: a runnable scenario fitted from
//! `/api/v1/query_range` answers or from OpenTelemetry traces (the fits are
//! `brownout::calibrate`'s).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::{Failure, Named};
use brownout::calibrate::{self, LatencySource, Options, Selector, otlp};
use brownout::report::escape;

/// Arguments of `brownout calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    #[command(subcommand)]
    source: Source,
}

/// Where the telemetry comes from.
#[derive(Subcommand, Debug)]
enum Source {
    /// Prometheus `/api/v1/query_range` answers (JSON): per-class request rates and the
    /// dependency's latency histogram buckets or quantiles (docs/openmetrics.md).
    Prometheus(PrometheusArgs),
    /// OpenTelemetry traces as the Collector's file exporter writes them (OTLP JSON): per-route
    /// arrivals, the dependency's latency and error rate, which routes call which
    /// dependencies (docs/calibrate.md).
    Otlp(OtlpArgs),
}

/// Arguments of `brownout calibrate otlp`.
#[derive(Args, Debug)]
struct OtlpArgs {
    /// The trace files (OTLP JSON: one request a line, or one document).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The service (resource `service.name`) whose SERVER spans are the routes. Default: the
    /// one service with SERVER spans.
    #[arg(long)]
    service: Option<String>,
    /// Model this one dependency alone, by its `peer.service` (else `server.address`).
    /// Default: every dependency, as `dependencies` with each class's call plan read from the
    /// span tree, when the traces show several; the one, when they show one.
    #[arg(long)]
    dependency: Option<String>,
    /// The width of a step of the arrival and error-rate profiles.
    #[arg(long, default_value = "1m")]
    step: String,
    /// Most routes written as classes (the busiest); the others are skipped and listed.
    #[arg(long, default_value_t = 50)]
    max_routes: usize,
    /// The folder to write (`scenario.ron`, `dependency-latency.csv` or with several
    /// dependencies one `latency-NAME.csv` each, `fit.md`); must not exist.
    #[arg(long, short = 'o')]
    out: PathBuf,
}

/// Arguments of `brownout calibrate prometheus`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("latency_source").required(true).args(["latency", "latency_quantile"])))]
struct PrometheusArgs {
    /// The query_range answers (one query each), all with the same step.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// A class and the selector of its request-rate series, `NAME=metric{label="value"}`
    /// (several matching series are summed; a `_total` counter is turned into a rate).
    #[arg(long = "class", value_name = "NAME=SELECTOR", required = true)]
    classes: Vec<String>,
    /// The selector of the dependency's latency histogram buckets (series with `le`).
    #[arg(long, value_name = "SELECTOR")]
    latency: Option<String>,
    /// A latency quantile series, `Q=SELECTOR` (0.5 and at least one other), fitted as a
    /// log-normal when there is no histogram.
    #[arg(long = "latency-quantile", value_name = "Q=SELECTOR")]
    latency_quantile: Vec<String>,
    /// The end of the quiet period, from the first sample (`"5m"`): its latency is the
    /// base. Default: the first quarter of the range.
    #[arg(long)]
    quiet_until: Option<String>,
    /// The folder to write (`scenario.ron`, `base-latency.csv`, `fit.md`); must not exist.
    #[arg(long, short = 'o')]
    out: PathBuf,
}

fn pair(text: &str, what: &str) -> Result<(String, Selector), Failure> {
    let (name, sel) =
        text.split_once('=').ok_or_else(|| Failure::input(format!("error: {what} {text:?} is not NAME=SELECTOR")))?;
    let sel = Selector::parse(sel).map_err(|m| Failure::input(format!("error: {what}: {m}")))?;
    Ok((name.trim().to_string(), sel))
}

/// Fit, check the scenario, and write the folder; exit 2 with nothing written on bad input.
pub fn calibrate(args: CalibrateArgs) -> Result<(), Failure> {
    let a = match args.source {
        Source::Prometheus(a) => a,
        Source::Otlp(a) => return otlp(a),
    };
    fresh_out(&a.files, &a.out)?;
    let classes = a.classes.iter().map(|c| pair(c, "--class")).collect::<Result<Vec<_>, _>>()?;
    let latency = match &a.latency {
        Some(s) => {
            LatencySource::Histogram(Selector::parse(s).map_err(|m| Failure::input(format!("error: --latency: {m}")))?)
        }
        None => LatencySource::Quantiles(
            a.latency_quantile
                .iter()
                .map(|q| {
                    let (q_text, sel) = pair(q, "--latency-quantile")?;
                    match q_text.parse::<f64>() {
                        Ok(q) if q > 0.0 && q < 1.0 => Ok((q, sel)),
                        _ => Err(Failure::input(format!("error: --latency-quantile {q_text:?}: a quantile in (0, 1)"))),
                    }
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    let quiet_until = a
        .quiet_until
        .as_deref()
        .map(|t| brownout::units::parse_duration(t).map(brownout::units::Dur))
        .transpose()
        .map_err(|m| Failure::input(format!("error: --quiet-until: {m}")))?;
    let opts = Options { classes, latency, quiet_until, latency_file: "base-latency.csv".into() };
    let mut series = Vec::new();
    for f in &a.files {
        series.extend(calibrate::read(f).map_err(|e| Failure::input(format!("error: {e}")))?);
    }
    let fitted = calibrate::calibrate(&series, &opts).map_err(|e| Failure::input(format!("error: {e}")))?;
    for k in &fitted.skipped {
        eprintln!("{}", escape::terminal(&format!("skipped: {k}")));
    }
    let mut files = vec![("scenario.ron", fitted.scenario.as_str()), ("fit.md", fitted.report.as_str())];
    if let Some(csv) = &fitted.latency_csv {
        files.push((opts.latency_file.as_str(), csv));
    }
    write(&a.out, &files)?;
    eprintln!("{}", escape::terminal(&format!("wrote {} (scenario.ron, fit.md)", a.out.display())));
    Ok(())
}

/// Refuse an `--out` that exists or that is one of the inputs.
fn fresh_out(files: &[PathBuf], out: &Path) -> Result<(), Failure> {
    let inputs: Vec<Named> = files.iter().map(|f| Named::new("the input", f)).collect();
    super::check_paths(Some(&Named::new("--out", out)), &[], &inputs)?;
    if out.exists() {
        return Err(Failure::input(format!("error: --out {} exists: calibrate writes a new folder", out.display())));
    }
    Ok(())
}

/// Skipped spans printed before the rest are only counted (fit.md lists them all).
const SKIPS_SHOWN: usize = 20;

/// `brownout calibrate otlp`: fit, print the route -> dependency map, check and write.
fn otlp(a: OtlpArgs) -> Result<(), Failure> {
    fresh_out(&a.files, &a.out)?;
    let step = brownout::units::parse_duration(&a.step)
        .map(brownout::units::Dur)
        .map_err(|m| Failure::input(format!("error: --step: {m}")))?;
    let opts = otlp::Options {
        service: a.service,
        dependency: a.dependency,
        step,
        max_routes: a.max_routes,
        latency_file: "dependency-latency.csv".into(),
    };
    let mut spans = Vec::new();
    for f in &a.files {
        spans.extend(otlp::read(f).map_err(|e| Failure::input(format!("error: {e}")))?);
    }
    let fitted = otlp::calibrate(&spans, &opts).map_err(|e| Failure::input(format!("error: {e}")))?;
    for k in fitted.skipped.iter().take(SKIPS_SHOWN) {
        eprintln!("{}", escape::terminal(&format!("skipped: {k}")));
    }
    if fitted.skipped.len() > SKIPS_SHOWN {
        eprintln!("skipped: {} more (fit.md lists every one)", fitted.skipped.len() - SKIPS_SHOWN);
    }
    for w in &fitted.warnings {
        eprintln!("{}", escape::terminal(&format!("warning: {w}")));
    }
    let mut files = vec![("scenario.ron", fitted.scenario.as_str())];
    files.extend(fitted.latency_files.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    files.push(("fit.md", &fitted.report));
    write(&a.out, &files)?;
    for l in &fitted.links {
        println!(
            "{}",
            escape::terminal(&format!(
                "calls: class {:?} -> {:?}: {:.3} per request ({} of {} requests call it)",
                l.class,
                l.dependency,
                l.per_request(),
                l.requests_calling,
                l.requests
            ))
        );
    }
    let names: Vec<String> = fitted.dependencies.iter().map(|d| d.name.clone()).collect();
    for p in &fitted.plans {
        let plan = if p.steps.is_empty() {
            format!("plan: class {:?} makes no call (calls_dependency: false)", p.class)
        } else {
            format!("plan: class {:?} calls: {}", p.class, p.ron(&names))
        };
        println!("{}", escape::terminal(&plan));
    }
    if fitted.graph {
        let deps: Vec<String> =
            fitted.dependencies.iter().map(|d| format!("{:?} ({} calls)", d.name, d.calls)).collect();
        let files: Vec<&str> = fitted.latency_files.iter().map(|(f, _)| f.as_str()).collect();
        eprintln!(
            "{}",
            escape::terminal(&format!(
                "wrote {} (scenario.ron, {}, fit.md): {} classes, dependencies {}",
                a.out.display(),
                files.join(", "),
                fitted.routes.len(),
                deps.join(", ")
            ))
        );
        return Ok(());
    }
    let d = &fitted.dependencies[fitted.chosen];
    eprintln!(
        "{}",
        escape::terminal(&format!(
            "wrote {} (scenario.ron, {}, fit.md): {} classes, dependency {:?} ({} calls)",
            a.out.display(),
            opts.latency_file,
            fitted.routes.len(),
            d.name,
            d.calls
        ))
    );
    Ok(())
}

/// Stage the folder beside `out` with `files` (name, text), check its scenario as `brownout
/// check` does, then rename it into place: a scenario `check` rejects is never written.
fn write(out: &Path, files: &[(&str, &str)]) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure::input(format!("error: {}: {e}", out.display()));
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let stage = tempfile::Builder::new().prefix(".calibrate.").tempdir_in(parent).map_err(|e| fail(&e))?;
    for (name, text) in files {
        std::fs::write(stage.path().join(name), text).map_err(|e| fail(&e))?;
    }
    if let Err(e) = brownout::scenario::load(&stage.path().join("scenario.ron")) {
        return Err(Failure::input(format!(
            "error: the fitted scenario does not pass `brownout check`, so nothing is written: {e}"
        )));
    }
    let staged: PathBuf = stage.keep();
    std::fs::rename(&staged, out).map_err(|e| {
        std::fs::remove_dir_all(&staged).ok();
        fail(&e)
    })
}
