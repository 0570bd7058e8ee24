//! Named, reproducible random streams.
//!
//! Every component draws from its own stream derived from (root seed, label), so that
//! adding a policy or a class never shifts another component's draws. Where a draw must be
//! identical across policies whatever order they ask in (the latency of request 17's
//! second attempt), a counter-based draw hashes (seed, label, counters) instead.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

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

/// SplitMix64 finaliser: a bijective 64-bit mixer.
const fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stream for component `label` under root `seed`.
pub fn stream(seed: u64, label: &str) -> Stream {
    Stream::seed_from_u64(mix(seed ^ mix(label_hash(label))))
}

/// A counter-based 64-bit draw: a pure function of (seed, label hash, a, b).
pub fn counter_u64(seed: u64, label: u64, a: u64, b: u64) -> u64 {
    mix(mix(mix(seed ^ label) ^ a) ^ b.wrapping_mul(0x2545_f491_4f6c_dd1d))
}

/// A counter-based uniform draw in the open interval (0, 1).
pub fn counter_f64(seed: u64, label: u64, a: u64, b: u64) -> f64 {
    ((counter_u64(seed, label, a, b) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
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
    fn fnv_matches_reference_vector() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (published test vector).
        assert_eq!(label_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
