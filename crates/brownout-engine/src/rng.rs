//! Named, reproducible random streams.
//!
//! Every component draws from its own stream derived from (root seed, label), so that
//! adding a policy or a class never shifts another component's draws. Where a draw must be
//! identical across policies whatever order they ask in (the latency of request 17's
//! second attempt), a counter-based draw hashes (seed, label, counters) instead.

use std::convert::Infallible;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{SeedableRng, TryRng};

/// The PRNG used everywhere in simulation code: Xoshiro256++.
pub type Stream = Xoshiro256PlusPlus;

/// FNV-1a hash of a label: stable across platforms and releases.
pub const fn label_hash(label: &str) -> u64 {
    let bytes = label.as_bytes();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// SplitMix64's increment (the golden ratio's fraction, odd).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64 finaliser: a bijective 64-bit mixer.
#[inline]
const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stream for component `label` under root `seed`.
pub fn stream(seed: u64, label: &str) -> Stream {
    Stream::seed_from_u64(mix(seed ^ mix(label_hash(label))))
}

/// A counter-based 64-bit draw: a pure function of (seed, label hash, a, b).
#[inline]
pub fn counter_u64(seed: u64, label: u64, a: u64, b: u64) -> u64 {
    Counter::new(seed, label).u64(a, b)
}

/// A counter-based uniform draw in the open interval (0, 1).
#[inline]
pub fn counter_f64(seed: u64, label: u64, a: u64, b: u64) -> f64 {
    Counter::new(seed, label).f64(a, b)
}

/// The counter-based draws of one (seed, label) pair, with the part of the hash that depends
/// on them alone done once: a component that draws on every request keeps one of these
/// instead of calling [`counter_u64`], whose first of three dependent mixing rounds would
/// otherwise sit on the request's critical path. Same values as [`counter_u64`] and
/// [`counter_f64`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter(u64);

impl Counter {
    /// The draws of `label` (a [`label_hash`]) under root `seed`.
    #[inline]
    pub const fn new(seed: u64, label: u64) -> Self {
        Self(mix(seed ^ label))
    }

    /// The 64-bit draw for counters (`a`, `b`).
    #[inline]
    pub fn u64(self, a: u64, b: u64) -> u64 {
        mix(self.key(a, b))
    }

    /// The generator for counters (`a`, `b`), to hand a sampler that may need more than one
    /// word: its first output is [`Counter::u64`]`(a, b)`.
    #[inline]
    pub fn rng(self, a: u64, b: u64) -> CounterRng {
        CounterRng(self.key(a, b))
    }

    /// The unmixed key of counters (`a`, `b`).
    #[inline]
    fn key(self, a: u64, b: u64) -> u64 {
        mix(self.0 ^ a) ^ b.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// The uniform draw in the open interval (0, 1) for counters (`a`, `b`).
    #[inline]
    pub fn f64(self, a: u64, b: u64) -> f64 {
        ((self.u64(a, b) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// The words of one counter-based draw: SplitMix64 started at the draw's key, so output `i`
/// is the mixed key plus `i` increments. Seeding a state-heavy generator per draw cost more
/// than the sampling; this costs one mixing round per word and keeps each draw a pure
/// function of its counters.
#[derive(Debug)]
pub struct CounterRng(u64);

impl TryRng for CounterRng {
    type Error = Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.try_next_u64().map(|w| (w >> 32) as u32)
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let w = mix(self.0);
        self.0 = self.0.wrapping_add(GAMMA);
        Ok(w)
    }

    #[inline]
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        rand::rand_core::utils::fill_bytes_via_next_word(dst, || self.try_next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_depend_on_seed_and_label_only() {
        let a1 = stream(7, "arrivals/checkout").next_u64();
        let a2 = stream(7, "arrivals/checkout").next_u64();
        let b = stream(7, "arrivals/browse").next_u64();
        let c = stream(8, "arrivals/checkout").next_u64();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn counter_draws_are_uniform_enough() {
        // Mean of U(0,1) is 1/2 with standard error 1/sqrt(12 n).
        let n = 100_000u64;
        let mean: f64 = (0..n).map(|i| counter_f64(1, 2, i, 0)).sum::<f64>() / n as f64;
        let se = 1.0 / (12.0 * n as f64).sqrt();
        assert!((mean - 0.5).abs() < 5.0 * se, "mean {mean}");
    }

    #[test]
    fn counter_draws_match_values_computed_independently() {
        // Computed by hand-written Python from the definition, so that a change to the hash,
        // which would shift every counter-based draw, cannot pass unseen:
        //   M = 2**64 - 1
        //   def m(z):  # SplitMix64's finaliser
        //       z = (z + 0x9e3779b97f4a7c15) & M
        //       z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
        //       z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
        //       return z ^ (z >> 31)
        //   draw = m(m(m(seed ^ label) ^ a) ^ ((b * 0x2545f4914f6cdd1d) & M))
        //   uniform = ((draw >> 11) + 0.5) / 2**53
        // with label = FNV-1a 64 of "dependency/latency" (0xcbf29ce484222325, prime 0x100000001b3).
        assert_eq!(counter_u64(1, 2, 3, 4), 0x4988_d95c_6046_63bd);
        assert_eq!(counter_u64(42, label_hash("dependency/latency"), (7 << 48) ^ 17, 1), 0xe1bd_e4e2_74e6_2712);
        let k = Counter::new(42, label_hash("dependency/latency"));
        assert_eq!(k.u64((7 << 48) ^ 17, 1), 0xe1bd_e4e2_74e6_2712);
        assert_eq!(k.f64(5, 6), 0.40184066692877246);
    }

    #[test]
    fn counter_rng_words_match_values_computed_independently() {
        // Same Python as above: key = m(m(seed ^ label) ^ a) ^ ((b * 0x2545f4914f6cdd1d) & M),
        // word i = m((key + i * 0x9e3779b97f4a7c15) & M): SplitMix64 started at the key.
        let mut r = Counter::new(1, 2).rng(3, 4);
        assert_eq!(r.next_u64(), 0x4988_d95c_6046_63bd);
        assert_eq!(r.next_u64(), 0x3c59_fc62_0c84_b049);
        assert_eq!(r.next_u64(), 0x0a6e_875f_5505_9001);
        // A u32 is the high half of the next word.
        assert_eq!(Counter::new(1, 2).rng(3, 4).next_u32(), 0x4988_d95c);
    }

    #[test]
    fn counter_rng_bytes_are_its_words_little_endian() {
        let mut bytes = [0u8; 12];
        Counter::new(1, 2).rng(3, 4).fill_bytes(&mut bytes);
        assert_eq!(bytes[..8], 0x4988_d95c_6046_63bd_u64.to_le_bytes());
        assert_eq!(bytes[8..], 0x3c59_fc62_0c84_b049_u64.to_le_bytes()[..4]);
    }

    #[test]
    fn fnv_matches_reference_vector() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (published test vector).
        assert_eq!(label_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
