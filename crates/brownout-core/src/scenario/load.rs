//! Loading a scenario: parse with a located error, validate every value (errors located at
//! the offending value by its path), then read and check every data file it names, all
//! before any run starts. Errors name the file, the line and column, and what was expected.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::data::{self, DataError};
use super::estimate;
use super::import::{self, ExpandError};
use super::validate::{Invalid, validate};
use super::{Arrivals, Delay, Drift, Latency, Scenario, locate};
use crate::policy::plugin::Plugins;
use crate::policy::{BuildCtx, PolicySpec};

/// A scenario that cannot be used, with where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    /// The file: the scenario, or a data file it names.
    pub file: PathBuf,
    /// 1-based line (0 when the error is about the whole file).
    pub line: usize,
    /// 1-based column (0 when the error is about the whole file).
    pub col: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file.display(), self.line, self.col, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Read, parse and validate a scenario file and every data file it names. Plugin layers
/// are not checked here (see [`load_with_plugins`]): a library user registers them later.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let text = data::bounded_text(path, "scenario file")?;
    load_text(path, &text)
}

/// [`load`] for scenario text already in memory: `path` names it in messages, and the data
/// files it names are read relative to `path`'s folder.
pub fn load_text(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let text = without_bom(text);
    let mut scenario = parse(path, text)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let expansion = import::expand(&mut scenario, dir).map_err(|e| import_error(path, text, e))?;
    validate(&scenario).map_err(|e| {
        let (at, imported) = expansion.source_path(&e.path);
        if let Some((file, pos)) = expansion.imported_at(&e.path) {
            // At the value in the imported file, naming the layer that imported it.
            let (line, col) = position(text, &at);
            let message = format!("{} (imported by {}:{line}:{col})", e.message, path.display());
            return ScenarioError { file: file.to_path_buf(), line: pos.line, col: pos.col, message };
        }
        let message = if imported { format!("{} (in the imported layers)", e.message) } else { e.message };
        located(path, text, Invalid { path: at, message })
    })?;
    let rates = check_data_files(&scenario, dir).map_err(|(at, e)| {
        let (line, col) = position(text, &at);
        ScenarioError { message: format!("{}; named at {}:{line}:{col}: {at}", e.message, path.display()), ..e }
    })?;
    // Rates read from data files count towards the event estimate only now.
    if !rates.is_empty() {
        estimate::check_with(&scenario, &rates)
            .map_err(|r| located(path, text, Invalid { path: r.path, message: r.message }))?;
    }
    Ok(scenario)
}

/// [`load`], and every plugin layer built once with `plugins`, so an unknown plugin name
/// or a parameter its factory refuses is an error located at the layer. `brownout check`
/// and `run` pass the binary's plugins (none), so both refuse every plugin layer alike.
pub fn load_with_plugins(path: &Path, plugins: &Plugins) -> Result<Scenario, ScenarioError> {
    let scenario = load(path)?;
    let ctx = BuildCtx::new(scenario.classes.iter().map(|c| c.name.clone()).collect())
        .on_instance(0, scenario.fleet.instances)
        .with_plugins(plugins.clone());
    for (i, p) in scenario.policies.iter().enumerate() {
        for (j, layer) in p.stack.iter().enumerate() {
            if let PolicySpec::Plugin(c) = &layer.policy
                && let Err(m) = plugins.build(c, &ctx)
            {
                let text = data::bounded_text(path, "scenario file")?;
                let at = format!("policies[{i}].stack[{j}].policy.Plugin.name");
                return Err(located(path, &text, Invalid { path: at, message: format!("policy \"{}\": {m}", p.name) }));
            }
        }
    }
    Ok(scenario)
}

/// An Import layer's error: in the scenario at the layer, or in the imported file (which
/// then names the layer that imported it).
fn import_error(path: &Path, text: &str, e: ExpandError) -> ScenarioError {
    match e {
        ExpandError::Scenario { path: at, message } => located(path, text, Invalid { path: at, message }),
        ExpandError::Imported { path: at, error } => {
            let (line, col) = position(text, &at);
            let message = format!("{} (imported by {}:{line}:{col})", error.message, path.display());
            ScenarioError { file: error.file, line: error.line, col: error.col, message }
        }
    }
}

/// Parse scenario text (no semantic checks). `path` is only used in messages.
pub fn parse(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
    let text = without_bom(text);
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .from_str::<Scenario>(text)
        .map_err(|e| {
            let (line, col, message) = super::relocate(text, e.position.line, e.position.col, &e.code.to_string());
            ScenarioError { file: path.to_path_buf(), line, col, message: explain(&message, text, line, col) }
        })
}

/// `text` without a leading UTF-8 byte order mark, which editors on Windows write and RON
/// would read as a stray character before the opening `(`.
pub(crate) fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// RON's message, made to say what was expected where it speaks of the parser's state.
fn explain(raw: &str, text: &str, line: usize, col: usize) -> String {
    if raw.contains("Unexpected missing field") || raw.contains("missing field") {
        format!("{raw} (every required field must be given; see README's scenario format)")
    } else if let Some(number) = fraction_at(text, line, col) {
        // An integer field read the digits before a `.` or an exponent, then met the rest.
        format!("expected an integer (a whole number such as 2), found {number}")
    } else {
        raw.to_string()
    }
}

/// The number around `line:col` when the parser stopped inside it at a `.` or an exponent:
/// an integer field given a fraction (`2.5`) or an exponent (`1e30`). At most 40 characters
/// of it, so a message never carries much of the file.
fn fraction_at(text: &str, line: usize, col: usize) -> Option<String> {
    let row: Vec<char> = text.lines().nth(line.checked_sub(1)?)?.chars().collect();
    let at = col.checked_sub(1)?;
    let number_char = |c: char| c.is_ascii_digit() || ".eE+-_".contains(c);
    let stop = *row.get(at)?;
    if !(stop == '.' || stop == 'e' || stop == 'E') || !at.checked_sub(1).is_some_and(|p| row[p].is_ascii_digit()) {
        return None;
    }
    let start = (0..at).rev().take_while(|&i| row[i].is_ascii_digit() || row[i] == '_').last().unwrap_or(at);
    let sign = usize::from(start > 0 && row[start - 1] == '-');
    let end = (at..row.len()).take_while(|&i| number_char(row[i])).last().map_or(at, |i| i + 1);
    let number: String = row[start - sign..end].iter().take(40).collect();
    Some(format!("`{number}`"))
}

/// Line and column of the value at `path` in `text` (0, 0 when the text is not RON).
fn position(text: &str, path: &str) -> (usize, usize) {
    locate::locate(text, path).map_or((0, 0), |(pos, _)| pos)
}

/// A semantic error of the scenario at `path`, located at its offending value.
pub fn located(path: &Path, text: &str, e: Invalid) -> ScenarioError {
    let (line, col) = position(text, &e.path);
    ScenarioError { file: path.to_path_buf(), line, col, message: e.message }
}

/// A data file's error: (path of the reference in the scenario, what is wrong).
type DataFault = (String, DataError);

/// What a data file holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Holds {
    /// `t_s`, `rate_per_s`: the arrivals of the class with this index.
    Rates(usize),
    /// One column of latencies: the dependency's own (its median must be positive under a
    /// Csv drift, which divides by it).
    DependencySamples(usize, String),
    /// `t_s`, `latency_ms`.
    Latencies,
    /// One column of latencies.
    Samples(String),
}

/// Every data file reference in `s`: (path of the reference in the scenario, file as
/// written, what it holds), in the order the check reads them. The one list of the fields
/// that name files: the check reads them, and [`data_files`] names them.
fn data_refs(s: &Scenario) -> Vec<(String, &str, Holds)> {
    let mut refs: Vec<(String, &str, Holds)> = Vec::new();
    for (i, c) in s.classes.iter().enumerate() {
        if let Arrivals::Csv { file } = &c.arrivals {
            refs.push((format!("classes[{i}].arrivals.Csv.file"), file, Holds::Rates(i)));
        }
    }
    for (k, d) in s.deps().iter().enumerate() {
        let at = s.dep_path(k);
        if let Latency::Empirical { file, column } = &d.latency {
            refs.push((format!("{at}.latency.Empirical.file"), file, Holds::DependencySamples(k, column.clone())));
        }
    }
    for (i, c) in s.classes.iter().enumerate() {
        if let Some(Latency::Empirical { file, column }) = &c.work {
            refs.push((format!("classes[{i}].work.Empirical.file"), file, Holds::Samples(column.clone())));
        }
    }
    let unwind = s.fleet.timeout_unwind.iter().map(|u| ("fleet.timeout_unwind", u));
    let hops = s.deps().iter().enumerate().map(|(k, d)| (format!("{}.hop", s.dep_path(k)), &d.hop));
    let fleet = unwind.map(|(at, u)| (at.to_string(), u));
    let own = s.fleet.pools.iter().enumerate().map(|(k, p)| (format!("fleet.pools[{k}]"), &p.connect));
    let connects = [("fleet.pool".to_string(), &s.fleet.pool.connect)].into_iter().chain(own);
    let connects = connects.filter_map(|(at, c)| c.as_ref().map(|c| (format!("{at}.connect.latency"), &c.latency)));
    let delays = [("fleet.overhead".to_string(), &s.fleet.overhead)].into_iter().chain(hops).chain(fleet);
    for (at, delay) in delays.chain(connects) {
        if let Delay::Random(Latency::Empirical { file, column }) = delay {
            refs.push((format!("{at}.Empirical.file"), file, Holds::Samples(column.clone())));
        }
    }
    for (k, d) in s.deps().iter().enumerate() {
        if let Drift::Csv { file } = &d.drift {
            refs.push((format!("{}.drift.Csv.file", s.dep_path(k)), file, Holds::Latencies));
        }
    }
    refs
}

/// The data files `s` reads, as written in it (relative to its folder), each once, sorted:
/// a run's results depend on their bytes as well as on the scenario's text.
pub fn data_files(s: &Scenario) -> Vec<String> {
    let files: BTreeSet<&str> = data_refs(s).into_iter().map(|(_, f, _)| f).collect();
    files.into_iter().map(str::to_string).collect()
}

/// Read every data file the scenario names (each file and column once), exactly as the
/// model will, and return the request rates of the classes whose arrivals they hold. The
/// error is (path of the reference in the scenario, what is wrong).
fn check_data_files(s: &Scenario, dir: &Path) -> Result<Vec<estimate::ClassRates>, DataFault> {
    let mut rates = Vec::new();
    let mut done: BTreeSet<(&str, Holds)> = BTreeSet::new();
    for (at, file, holds) in data_refs(s) {
        let path = dir.join(file);
        match holds {
            Holds::Rates(class) => rates.push((class, data::rate_series(&path).map_err(|e| (at, e))?)),
            Holds::DependencySamples(k, column) => {
                let ms = data::latency_samples(&path, &column).map_err(|e| (at.clone(), e))?;
                if matches!(s.deps()[k].drift, Drift::Csv { .. }) && median_ns(&ms) == 0 {
                    let message =
                        format!("the median of \"{column}\" is 0, but a Csv drift divides by the base median");
                    return Err((at, DataError { file: path, line: 0, col: 0, message }));
                }
            }
            _ if !done.insert((file, holds.clone())) => {}
            Holds::Latencies => data::latency_series(&path).map(drop).map_err(|e| (at, e))?,
            Holds::Samples(column) => data::latency_samples(&path, &column).map(drop).map_err(|e| (at, e))?,
        }
    }
    Ok(rates)
}

/// The median of latencies in milliseconds as the model takes it (nanoseconds, sorted,
/// the element at half the length).
fn median_ns(ms: &[f64]) -> u64 {
    let mut ns: Vec<u64> = ms.iter().map(|m| (m * crate::engine::MILLISECOND as f64) as u64).collect();
    ns.sort_unstable();
    ns[ns.len() / 2]
}
