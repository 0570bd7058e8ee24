//! Tests that keep the documents and the code's shape true: README's figures and RON blocks,
//! docs/reference.md, the golden reports in docs/golden/, every subcommand's help, and the
//! layering rules (crate dependencies, module cycles, file length).
//! Re-bless: `BROWNOUT_BLESS=1 cargo test --profile ci --test docs golden::` (or `reference::`,
//! `readme::`).

#[path = "../common/mod.rs"]
mod common;

mod cli_help;
mod cluster_recipes;
mod explain_defaults;
mod golden;
mod json_fields;
mod layering;
mod performance_figures;
mod public_api;
mod readme;
mod reference;
mod test_commands;
