//! Integration tests of the command line, through the built binary: one module per command
//! or output. Belongs here: `run` and its JSON, JUnit, events and progress output, `diff` and
//! the CI gate, `new` templates, the run report's panels and the browser check of
//! report.html, guards against runaway input, and every shipped scenario run as a test.

#[path = "../common/mod.rs"]
mod common;

mod browser;
mod browser_interactive;
mod decide_json;
mod decide_run;
mod dep_tables;
mod diff;
mod diff_ci;
mod events;
mod guards;
mod json;
mod junit;
mod metastable;
mod otlp;
mod panels;
mod progress;
mod prometheus;
mod scenarios;
mod summary_csv;
mod templates;
