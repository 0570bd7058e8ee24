//! Integration tests of files in and out: one module per topic. Belongs here: the bad-input
//! corpus (`bad_input/`), loader fuzzing, data files and `check`, error locations, escaping of
//! names, output folders (locks, staging, manifests), sweep journals, and the safety of the
//! user's files beside them.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod check_data;
mod connlife_input;
mod data_safety;
mod dep_scope_input;
mod escape;
mod files;
mod graph_input;
mod journal;
mod loader_fuzz;
mod locations;
mod otlp_input;
mod service_input;
mod sharing_input;
