//! The wait of one transaction in the counting experiment: a nominal
//! duration with ±10% uniform noise, waited either on the stand-in
//! [`timer`](crate::suites::metrics::timer) or by yielding to weft's scheduler
//! until the deadline has passed.
//!
//! Which mechanism for which wait (measured on the 2-core dev machine, see
//! the README): the 10 ms wait uses the timer, whose ~60–100 µs of lateness
//! is 1% of it. A 10 µs wait cannot: the timer would fire it 6–10× late and
//! its one thread would have to wake ~a million wakers a second, so the
//! 10 µs wait *spins*: the task checks the clock and calls
//! `weft::task::yield_now()` until the deadline has passed, which keeps
//! every worker busy (the load the 10 µs case is there to put on the
//! counters). `--short-wait timer` runs the 10 µs case on the timer instead.

use std::time::{Duration, Instant};

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::suites::metrics::timer::TimerHandle;

/// Relative half-width of the uniform noise added to every wait.
pub const NOISE: f64 = 0.1;

/// How a task waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// A sleep on the stand-in timer thread.
    Timer,
    /// `yield_now` until the deadline has passed.
    Spin,
}

/// One transaction's wait: `nominal` ± [`NOISE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wait {
    /// The mean wait.
    #[serde(rename = "nominal_us", serialize_with = "as_micros")]
    pub nominal: Duration,
    /// How it is waited.
    pub mechanism: Mechanism,
}

fn as_micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e6)
}

impl Wait {
    /// `10 ms`, `10 µs`: the wait's name in tables.
    pub fn label(&self) -> String {
        crate::suites::metrics::duration_label(self.nominal)
    }

    /// Waits a random duration within `nominal` ± [`NOISE`].
    pub async fn run(&self, timer: &TimerHandle, rng: &mut Rng) {
        let factor = 1.0 + NOISE * (2.0 * rng.next_f64() - 1.0);
        self.exactly(self.nominal.mul_f64(factor), timer).await;
    }

    /// Waits `duration` with this wait's mechanism.
    pub async fn exactly(&self, duration: Duration, timer: &TimerHandle) {
        match self.mechanism {
            Mechanism::Timer => timer.sleep(duration).await,
            Mechanism::Spin => spin(duration).await,
        }
    }
}

/// Yields to the scheduler until `duration` has passed.
async fn spin(duration: Duration) {
    let deadline = Instant::now() + duration;
    while Instant::now() < deadline {
        weft::task::yield_now().await;
    }
}

/// A small fast generator (xorshift64*) for the waits' noise: each task
/// has its own, seeded by its index, so runs draw the same waits.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for stream `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        // splitmix64 of the seed: distinct, never-zero states.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        bits as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_uniform_enough() {
        let mut rng = Rng::new(0);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.next_f64()).collect();
        assert!(draws.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        assert_ne!(Rng::new(1).next_f64(), Rng::new(2).next_f64());
    }

    #[test]
    fn spin_waits_at_least_its_duration() {
        let rt = weft::runtime::Runtime::new().unwrap();
        let start = Instant::now();
        rt.block_on(spin(Duration::from_micros(200)));
        assert!(start.elapsed() >= Duration::from_micros(200));
    }
}
