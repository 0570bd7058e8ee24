//! Integration tests of the command line, through the built binary: one module per command
//! or output. Belongs here: `run` and its JSON, JUnit, events and progress output, `diff` and
//! the CI gate, `new` templates, the run report's panels and the browser check of
//! report.html, guards against runaway input, and every shipped scenario run as a test.

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod browser_interactive;
mod check_import_json;
mod decide_json;
mod decide_recovery;
mod decide_run;
mod dep_tables;
mod diff;
mod diff_ci;
mod events;
mod graph_diff;
mod graph_events;
mod graph_report;
mod guards;
mod json;
mod junit;
mod load_chart;
mod metastable;
mod otlp;
mod otlp_graph;
mod panels;
mod progress;
mod prometheus;
mod quiet;
mod real_proxies;
mod scenarios;
mod summary_csv;
mod templates;
