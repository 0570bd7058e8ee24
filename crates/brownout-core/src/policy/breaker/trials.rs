//! The trial calls of a half-open breaker: how many may still start, and which are out.
//! Shared by the breakers whose half-open state admits a fixed number of probes.

/// See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Trials {
    left: u32,
    ids: Vec<u64>,
}

impl Trials {
    /// A new half-open episode with `permits` trial calls.
    pub fn open(&mut self, permits: u32) {
        self.left = permits;
        self.ids.clear();
    }

    /// Take a permit for attempt `id`; false when none is left.
    pub fn take(&mut self, id: u64) -> bool {
        if self.left == 0 {
            return false;
        }
        self.left -= 1;
        self.ids.push(id);
        true
    }

    /// Attempt `id` was not executed: forget it, and return its permit if `give_back`
    /// (the episode it belongs to is still running).
    pub fn cancel(&mut self, id: u64, give_back: bool) {
        if self.finish(id) && give_back {
            self.left += 1;
        }
    }

    /// Forget trial `id` (it completed); true if it was one of this episode's trials.
    pub fn finish(&mut self, id: u64) -> bool {
        match self.ids.iter().position(|&t| t == id) {
            Some(i) => {
                self.ids.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// The trials still out.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_are_taken_returned_on_cancel_and_not_on_finish() {
        let mut t = Trials::default();
        t.open(2);
        assert!(t.take(1) && t.take(2));
        assert!(!t.take(3), "only two permits");
        t.cancel(1, true);
        assert!(t.take(4), "a cancelled trial returns its permit");
        assert!(t.finish(2));
        assert!(!t.take(5), "a finished trial does not (resilience4j: permits are not returned)");
        assert!(!t.finish(2), "already forgotten");
        assert_eq!(t.ids(), &[4]);
    }
}
