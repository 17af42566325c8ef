//! A soak's sampler: every interval, the server's resources and CPU, and
//! the answers and errors since the last sample.

use super::*;

/// A soak's sampler: the server's resources and CPU, and the answers and
/// errors since the last sample.
pub(super) struct Sampler {
    pid: u32,
    start: Instant,
    interval: Duration,
    next: Instant,
    pub(super) samples: Vec<Sample>,
    /// At the last sample: when, the server's CPU, the answers so far.
    last: (Instant, Option<Duration>, u64, u64),
}

impl Sampler {
    pub(super) fn new(soak: &SoakConfig, server: &Server, start: Instant) -> Sampler {
        Sampler {
            pid: server.pid(),
            start,
            interval: soak.interval,
            next: start,
            samples: Vec::new(),
            last: (start, server.cpu(), 0, 0),
        }
    }

    pub(super) async fn sample_if_due(&mut self, shared: &Shared, now: Instant) {
        if now >= self.next {
            self.sample(shared, now).await;
            // On the interval's grid, however late this sample was.
            while self.next <= now {
                self.next += self.interval;
            }
        }
    }

    /// Takes a sample (a server whose `/proc` cannot be read gives zeros,
    /// which fail the verdict rather than hide). `/proc` is read before
    /// `/metrics` is fetched, so the fetch's connection is not counted.
    pub(super) async fn sample(&mut self, shared: &Shared, now: Instant) {
        let resources = Resources::of(self.pid).unwrap_or_default();
        let cpu = process_cpu(self.pid);
        let threads_by_kind = fetch(shared.address, "/metrics")
            .await
            .as_deref()
            .and_then(threads_by_kind);
        let (users, reports, p99, errors) = {
            let mut state = shared.lock();
            let p99 = std::mem::take(&mut state.since_sample)
                .summary()
                .map(|p| p.p99_ms);
            let errors = state.outcome.errors_by_kind;
            (state.users_answered, state.reports_answered, p99, errors)
        };
        let client_connections = shared.connections.load(Ordering::Relaxed) as u64;
        let (at, cpu0, users0, reports0) = self.last;
        let elapsed = (now - at).as_secs_f64();
        let cpu_ms_per_s = match (cpu0, cpu) {
            (Some(c0), Some(c1)) if elapsed > 0.0 => {
                c1.saturating_sub(c0).as_secs_f64() * 1e3 / elapsed
            }
            _ => 0.0,
        };
        self.samples.push(Sample {
            t_s: (now - self.start).as_secs_f64(),
            resources,
            threads_by_kind,
            client_connections,
            users: users - users0,
            reports: reports - reports0,
            users_p99_ms: p99,
            cpu_ms_per_s,
            errors,
        });
        self.last = (now, cpu, users, reports);
    }
}
