//! Sampling for the log generator: its random number generator, uniform, Bernoulli,
//! normal and log-normal draws, a hash to derive stable per-client values, and weighted
//! tables (a linear one for short lists, Walker's alias table for long ones).

use rand::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every chunk and the site draw from (seeded by [`crate::rng_for`]).
pub(super) type Rng = Xoshiro256PlusPlus;

/// A uniform draw from `[0, 1)`, with 53 random bits.
pub(super) fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// True with probability `p`.
pub(super) fn chance(rng: &mut Rng, p: f64) -> bool {
    unit(rng) < p
}

/// A uniform draw from `0..n`.
pub(super) fn below(rng: &mut Rng, n: usize) -> usize {
    (((rng.next_u64() >> 32) * n as u64) >> 32) as usize
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - unit(rng);
    let u2 = unit(rng);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A log-normal draw around `median` with the spread `sigma` of its logarithm, clamped to
/// 200 bytes .. 4 GB.
pub(super) fn log_normal(rng: &mut Rng, (median, sigma): (f64, f64)) -> u32 {
    (median * (sigma * normal(rng)).exp()).clamp(200.0, 4e9) as u32
}

/// SplitMix64's finaliser: a well-mixed hash of `x`.
pub(super) fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A few weighted items, picked by a linear scan (fast for short tables).
pub(super) struct Weighted<T> {
    /// Cumulative thresholds out of 2^32; the last is 2^32.
    bounds: Vec<u64>,
    items: Vec<T>,
}

impl<T: Copy> Weighted<T> {
    /// The table of `(item, weight)` pairs, in their order.
    pub(super) fn new(pairs: impl IntoIterator<Item = (T, f64)>) -> Self {
        let pairs: Vec<(T, f64)> = pairs.into_iter().collect();
        let total: f64 = pairs.iter().map(|p| p.1).sum();
        let mut sum = 0.0;
        let mut bounds = Vec::with_capacity(pairs.len());
        for p in &pairs {
            sum += p.1;
            bounds.push(((sum / total) * 4_294_967_296.0) as u64);
        }
        *bounds.last_mut().expect("a weighted table is not empty") = 1 << 32;
        Weighted {
            bounds,
            items: pairs.into_iter().map(|p| p.0).collect(),
        }
    }

    /// The item for `x` in `0..2^32`.
    pub(super) fn at(&self, x: u64) -> T {
        let i = self.bounds.iter().position(|&b| x < b).unwrap_or(0);
        self.items[i]
    }

    /// An item drawn by weight.
    pub(super) fn pick(&self, rng: &mut Rng) -> T {
        self.at(rng.next_u64() >> 32)
    }
}

/// Walker's alias table: one draw in constant time from thousands of weighted items.
pub(super) struct Alias {
    /// Chance (out of 2^32) of keeping the slot's own item rather than its alias.
    keep: Vec<u64>,
    alias: Vec<u32>,
}

impl Alias {
    /// The table of items `0..weights.len()` drawn with `weights`.
    pub(super) fn new(weights: &[f64]) -> Self {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut keep = vec![1u64 << 32; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) =
            (0..n).partition(|&i| scaled[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            keep[s] = (scaled[s] * 4_294_967_296.0) as u64;
            alias[s] = l as u32;
            scaled[l] -= 1.0 - scaled[s];
            if scaled[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        Alias { keep, alias }
    }

    /// An item drawn by weight.
    pub(super) fn pick(&self, rng: &mut Rng) -> usize {
        let r = rng.next_u64();
        let slot = (((r >> 32) * self.keep.len() as u64) >> 32) as usize;
        if (r & 0xFFFF_FFFF) < self.keep[slot] {
            slot
        } else {
            self.alias[slot] as usize
        }
    }
}

/// Zipf weights `rank^-exponent` of `n` items, scaled to add up to `share`.
pub(super) fn zipf_weights(n: usize, exponent: f64, share: f64) -> Vec<f64> {
    let raw: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-exponent)).collect();
    let total: f64 = raw.iter().sum();
    raw.into_iter().map(|w| w * share / total).collect()
}
