//! Integration tests of the simulated world and its figures: one module per topic. Belongs
//! here: world semantics against closed forms and hand timelines, outcomes and causes, the
//! fleet, phases, replications, common random numbers, time series, memory and scale, the
//! population of every figure, every setting being live, the properties over generated
//! scenarios, `verify`, and the reproductions of fixed defects.

#[path = "../common/mod.rs"]
mod common;

mod api;
mod bench_models;
mod cancellation;
mod connect_estimate;
mod connlife;
mod crn;
mod defects;
mod dep_figures;
mod dep_pools;
mod dep_scope;
mod fallbacks;
mod fleet;
mod graph;
mod graph_fix;
mod graph_properties;
mod graph_verify;
mod health_checks;
mod live_settings;
mod load_series;
mod memory;
mod model;
mod outcomes;
mod overheads;
mod periodic_arrivals;
mod phases;
mod plan_budget;
mod population;
mod properties;
mod r02;
mod recovery;
mod replications;
mod request_timeout;
mod scale;
mod server_queue;
mod server_shed_retry;
mod service_properties;
mod service_world;
mod sharing;
mod slo;
mod stream;
mod timeseries;
mod verify;
mod verify_ps;
mod world_semantics;
