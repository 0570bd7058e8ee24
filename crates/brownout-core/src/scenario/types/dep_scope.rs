//! What the scenario scopes to dependencies, read off it: which dependencies a class calls
//! (for layers scoped to dependencies) and how many connections each instance's pools hold
//! (`fleet.pool` and `fleet.pools`).

use super::*;

impl Scenario {
    /// The names of the dependencies class `c` calls: those its plan names (in plan order,
    /// repeated as often as called), or the one dependency; none with `calls_dependency: false`.
    pub fn dependencies_called<'a>(&'a self, c: &'a Class) -> Vec<&'a str> {
        if !c.calls_dependency {
            return Vec::new();
        }
        if c.calls.is_empty() {
            return vec![self.deps()[0].name.as_str()];
        }
        c.calls.iter().flat_map(|step| step.calls().iter().filter_map(|call| call.dependency())).collect()
    }

    /// Connections per instance in the pools calls use: each of `fleet.pools`, and the
    /// fleet's `pool` unless every dependency has a pool of its own. Without `fleet.pools`,
    /// `fleet.pool.max_connections`.
    pub fn pool_connections(&self) -> u32 {
        let own: u32 = self.fleet.pools.iter().fold(0, |n, p| n.saturating_add(p.max_connections));
        let shared = self.deps().iter().any(|d| self.fleet.pools.iter().all(|p| p.dependency != d.name));
        own.saturating_add(if shared { self.fleet.pool.max_connections } else { 0 })
    }
}
