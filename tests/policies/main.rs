//! Integration tests of the policies: one module per policy family or contract. Belongs here:
//! a policy's behaviour through a scenario (breakers, limiters, Envoy, .NET, shedding), the
//! hooks and status contracts every policy keeps, plugins, imports of library config files,
//! golden trajectories of the real libraries and the differential tests against them.
//! Fast loop for a policy: `cargo test --profile ci --test policies shed_by_deadline::`
//! (the module's name as the filter), after its unit tests in `-p brownout-core --lib policy::`.

#[path = "../common/mod.rs"]
mod common;

mod breaker_conformance;
mod connlife_import;
mod differential;
mod dotnet;
mod envoy;
mod haproxy_redispatch;
mod haproxy_retries;
mod import;
mod import_dependency;
mod import_envoy;
mod import_outlier;
mod import_predicates;
mod limiter_semantics;
mod outer_ids;
mod plugin;
mod policy_hooks;
mod policy_registry;
mod policy_status;
mod proxy_haproxy;
mod proxy_haproxy_import;
mod proxy_nginx;
mod proxy_nginx_import;
mod proxy_refusal_status;
mod proxy_timeout_start;
mod rate_limit;
mod retry_predicates;
mod retry_unavailable;
mod route_import;
mod shed_by_deadline;
mod timeout_inactivity;
mod trajectories;
