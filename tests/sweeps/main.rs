//! Integration tests of sweeps, tuning and decisions: one module per topic. Belongs here:
//! `sweep` (grids, links, reuse, ties, sensitivity), `tune` (knobs, budgets), the `decide`
//! section over sweeps, feasibility bounds, and the one comparison rule they share.

#[path = "../common/mod.rs"]
mod common;

mod decide_flags;
mod decide_sweep;
mod feasibility;
mod graph_decide;
mod graph_paths;
mod one_rule;
mod sensitivity;
mod service_paths;
mod shard_merge;
mod shard_merge_json;
mod stale_outputs;
mod sweep;
mod sweep_answers;
mod sweep_links;
mod sweep_reuse;
mod sweep_ties;
mod tune;
mod tune_budget;
mod tune_knobs;
