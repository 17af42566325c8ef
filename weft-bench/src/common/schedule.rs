//! The open loop's arrival times: a Poisson process, i.e. exponentially
//! distributed gaps, drawn from a seeded RNG so that every runtime gets
//! the same arrivals at the same offsets from its start.
//!
//! Invariant: arrivals are strictly increasing offsets from the start of
//! the run and do not depend on how fast anything is served (an open loop:
//! a slow runtime does not slow the arrivals down).

use std::time::Duration;

/// Arrival offsets of a Poisson process of `rate_per_s` arrivals a second.
#[derive(Debug, Clone)]
pub struct Poisson {
    rng: fastrand::Rng,
    mean_gap_s: f64,
    next: Duration,
}

impl Poisson {
    /// A schedule of `rate_per_s` arrivals a second (must be positive),
    /// seeded with `seed`; its first arrival is one gap after zero.
    pub fn new(rate_per_s: f64, seed: u64) -> Poisson {
        assert!(rate_per_s > 0.0, "an arrival rate must be positive");
        let mut schedule = Poisson {
            rng: fastrand::Rng::with_seed(seed),
            mean_gap_s: 1.0 / rate_per_s,
            next: Duration::ZERO,
        };
        schedule.next = schedule.gap();
        schedule
    }

    /// The next arrival's offset from the start, without consuming it.
    pub fn peek(&self) -> Duration {
        self.next
    }

    /// Consumes the next arrival and returns its offset.
    pub fn pop(&mut self) -> Duration {
        let arrival = self.next;
        self.next = arrival + self.gap();
        arrival
    }

    /// One exponential gap by inversion: `-ln(U) × mean` with `U` uniform
    /// in (0, 1]; at least 1 ns, so arrivals strictly increase.
    fn gap(&mut self) -> Duration {
        let uniform = 1.0 - self.rng.f64();
        let seconds = -uniform.ln() * self.mean_gap_s;
        Duration::from_secs_f64(seconds).max(Duration::from_nanos(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_rate_is_the_rate_asked() {
        let mut schedule = Poisson::new(2_000.0, 7);
        let n = 200_000;
        let mut last = Duration::ZERO;
        for _ in 0..n {
            let arrival = schedule.pop();
            assert!(arrival > last);
            last = arrival;
        }
        let rate = f64::from(n) / last.as_secs_f64();
        assert!((rate / 2_000.0 - 1.0).abs() < 0.01, "rate {rate}");
    }

    #[test]
    fn gaps_are_exponential() {
        // For an exponential distribution, P(gap > mean) = e^-1 ≈ 0.368.
        let mut schedule = Poisson::new(1_000.0, 11);
        let mut last = Duration::ZERO;
        let n = 100_000;
        let mut longer = 0;
        for _ in 0..n {
            let arrival = schedule.pop();
            if arrival - last > Duration::from_millis(1) {
                longer += 1;
            }
            last = arrival;
        }
        let share = f64::from(longer) / f64::from(n);
        assert!((share - (-1.0f64).exp()).abs() < 0.01, "share {share}");
    }

    #[test]
    fn a_seed_gives_the_same_schedule() {
        let mut a = Poisson::new(2_000.0, 3);
        let mut b = Poisson::new(2_000.0, 3);
        assert_eq!(a.peek(), b.peek());
        assert!((0..1_000).all(|_| a.pop() == b.pop()));
        assert_ne!(Poisson::new(2_000.0, 4).peek(), b.peek());
    }
}
