//! What every load generator of the echo and HTTP suites shares: its
//! [`Plan`] (connections, message, window, drain, stall; a fixed rate and
//! the server's counters), the send slots of a paced run (`Pacer`),
//! where a run stands (`Phases`: the readings at its window's start,
//! the drain's deadline) and what it measured ([`Outcome`]).
//!
//! Every generator keeps the same invariants (`suites/echo/generator.rs`
//! states them): a latency is recorded iff its request started inside the
//! window, throughput counts the requests that finished inside it, the
//! CPU figures are read at the window's edges, and no wait is without a
//! deadline.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::figure::skew::Readings;
use crate::common::latency::Recorder;
use crate::common::measure::{Span, process_cpu_time, thread_cpu_time};
use crate::common::others;
use crate::serve::cost::{Counts, Probe};

/// How one run generates load (the HTTP suite's generator's too).
#[derive(Debug, Clone)]
pub struct Plan {
    /// Connections, each with one message out at a time.
    pub connections: usize,
    /// Bytes of every message (the HTTP generator sends GETs instead).
    pub message_bytes: usize,
    /// Excluded from every figure.
    pub warmup: Duration,
    /// The measured window.
    pub measure: Duration,
    /// Longest wait after the window for the round trips still out.
    pub drain_timeout: Duration,
    /// Longest time without any round trip finishing before the server is
    /// taken for hung.
    pub stall_timeout: Duration,
    /// A fixed rate, and the server's counters.
    pub options: RunOptions,
}

/// What a run may add to its closed loop (the HTTP suite's generator
/// takes them too).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// At most this many requests per second over all connections: each
    /// request waits for the next send slot (`Pacer`); `None`: closed
    /// loop, each connection sends again at once.
    pub rate_per_s: Option<f64>,
    /// perf on the server's threads, enabled over the window.
    pub probe: Option<Arc<Probe>>,
}

/// Send slots at a fixed rate shared by all connections: each request
/// takes the next slot. A request late for its slot (the generator's
/// timer wakes to the millisecond; every connection was busy; the
/// generator's thread waited for a core) goes at once and the slots
/// behind it stay, so every server is sent the same number of requests;
/// slots more than [`Pacer::CATCH_UP`] old are dropped, so a long stall is
/// not made up (a burst is at most one request per connection anyway).
#[derive(Debug)]
pub(crate) struct Pacer {
    interval: Duration,
    next: Instant,
}

impl Pacer {
    /// How far behind now the slots may fall before they are dropped.
    pub(crate) const CATCH_UP: Duration = Duration::from_millis(100);

    /// Slots every `1 / rate_per_s` from `start`; `None` without a rate.
    pub(crate) fn new(rate_per_s: Option<f64>, start: Instant) -> Option<Pacer> {
        let rate = rate_per_s.filter(|r| *r > 0.0)?;
        Some(Pacer {
            interval: Duration::from_secs_f64(1.0 / rate),
            next: start,
        })
    }

    /// When the next request may go (at or before `now`: at once).
    pub(crate) fn slot(&mut self, now: Instant) -> Instant {
        let oldest = now.checked_sub(Pacer::CATCH_UP).unwrap_or(now);
        let at = self.next.max(oldest);
        self.next = at + self.interval;
        at
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Latencies of the round trips that started inside the window.
    pub latency: Recorder,
    /// Round trips that finished inside the window.
    pub finished: u64,
    /// The window, the process's CPU over it, round trips of the window
    /// still out at the drain deadline, the others' share.
    pub readings: Readings,
    /// The generator thread's own CPU time between the readings at the
    /// window's start and end.
    pub generator_cpu: Duration,
    /// The server threads' counts over the window, or why there are none;
    /// `None` when nothing was counted.
    pub server: Option<Result<Counts, String>>,
}

impl Outcome {
    /// Nothing measured yet, over `plan`'s window.
    pub(crate) fn over(plan: &Plan) -> Outcome {
        let readings = Readings {
            window: plan.measure,
            ..Readings::default()
        };
        Outcome {
            readings,
            ..Outcome::default()
        }
    }
}

/// The readings at the window's start (the HTTP suite's generator takes
/// them too).
pub(crate) struct WindowStart {
    at: Instant,
    /// perf's counting, enabled at the start: why not, if it failed.
    counting: Result<(), String>,
    process_cpu: Duration,
    generator_cpu: Duration,
    others: Option<others::CpuTimes>,
}

impl WindowStart {
    /// Enables the server's counters (if `options` has them) and reads
    /// the process's, this thread's and the machine's CPU at `at`.
    pub(crate) fn now(at: Instant, options: &RunOptions) -> io::Result<WindowStart> {
        let counting = options.probe.as_ref().map_or(Ok(()), |p| p.enable());
        Ok(WindowStart {
            at,
            counting: counting.map_err(|e| format!("perf: {e}")),
            process_cpu: process_cpu_time()?,
            generator_cpu: thread_cpu_time(),
            others: others::CpuTimes::now(),
        })
    }

    /// Fills in the outcome's CPU figures from these readings to `now`
    /// and disables the server's counters (a failure to count is the
    /// outcome's `server`).
    pub(crate) fn close(
        &self,
        now: Instant,
        outcome: &mut Outcome,
        options: &RunOptions,
    ) -> io::Result<()> {
        outcome.readings.cpu = process_cpu_time()?.saturating_sub(self.process_cpu);
        outcome.generator_cpu = thread_cpu_time().saturating_sub(self.generator_cpu);
        outcome.readings.cpu_window = now.saturating_duration_since(self.at);
        outcome.readings.others_cpu_pct = others::since(self.others);
        if let Some(probe) = &options.probe {
            let disabled = probe.disable().map_err(|e| format!("perf: {e}"));
            if let Err(err) = self.counting.clone().and(disabled) {
                outcome.server = Some(Err(err));
            }
        }
        Ok(())
    }
}

/// Where a run stands (both generators): the readings at its window's
/// start once taken, and the drain's deadline once the window ended.
pub(crate) struct Phases {
    span: Span,
    window_start: Option<WindowStart>,
    /// Set when the window ends: `end` (as the loop saw it) + the drain.
    pub(crate) drain_deadline: Option<Instant>,
}

impl Phases {
    /// A run whose window is `span`.
    pub(crate) fn new(span: Span) -> Phases {
        Phases {
            span,
            window_start: None,
            drain_deadline: None,
        }
    }

    /// Takes what is due at `now`: the window's start readings at
    /// `warm_end`; at `end` its figures (into `outcome`) and the drain's
    /// deadline. True when the window ended at this step.
    pub(crate) fn step(
        &mut self,
        now: Instant,
        plan: &Plan,
        outcome: &mut Outcome,
    ) -> io::Result<bool> {
        if self.window_start.is_none() && now >= self.span.warm_end {
            self.window_start = Some(WindowStart::now(now, &plan.options)?);
        }
        if self.drain_deadline.is_some() || now < self.span.end {
            return Ok(false);
        }
        match &self.window_start {
            Some(start) => start.close(now, outcome, &plan.options)?,
            // A window with no reading at its start (the loop woke past
            // `end`): its figures say nothing.
            None => outcome.readings.cpu_window = Duration::ZERO,
        }
        self.drain_deadline = Some(now + plan.drain_timeout);
        Ok(true)
    }

    /// `deadline`, or the next phase's start if sooner.
    pub(crate) fn next(&self, deadline: Instant) -> Instant {
        let mut next = deadline.min(self.drain_deadline.unwrap_or(self.span.end));
        if self.window_start.is_none() {
            next = next.min(self.span.warm_end);
        }
        next
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::{ErrorKind, Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::thread;

    /// A short plan for tests (the HTTP generator's too).
    pub(crate) fn plan(connections: usize, message_bytes: usize) -> Plan {
        Plan {
            connections,
            message_bytes,
            warmup: Duration::from_millis(20),
            measure: Duration::from_millis(200),
            drain_timeout: Duration::from_secs(2),
            stall_timeout: Duration::from_secs(2),
            options: RunOptions::default(),
        }
    }

    /// A blocking server on a thread per connection (the HTTP generator's
    /// tests' too): each read (up to 8 KiB) goes to `reply` with the
    /// connection's own state, and what `reply` appends is sent back.
    pub(crate) fn thread_server<S: Default>(
        reply: impl Fn(&mut S, &[u8], &mut Vec<u8>) + Clone + Send + 'static,
    ) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let reply = reply.clone();
                thread::spawn(move || {
                    let (mut state, mut buffer, mut out) = (S::default(), [0u8; 8192], Vec::new());
                    while let Ok(read @ 1..) = stream.read(&mut buffer) {
                        out.clear();
                        reply(&mut state, &buffer[..read], &mut out);
                        if stream.write_all(&out).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        address
    }

    /// What a closed loop of [`plan`] against a working server measured.
    pub(crate) fn closed_loop_measured(outcome: &Outcome) {
        assert!(outcome.finished > 0);
        assert!(outcome.latency.count() > 0);
        assert_eq!(outcome.readings.unfinished, 0);
        assert_eq!(outcome.readings.window, Duration::from_millis(200));
        assert!(outcome.readings.cpu_window >= Duration::from_millis(150));
        assert!(outcome.generator_cpu > Duration::ZERO);
        assert!(outcome.generator_cpu <= outcome.readings.cpu);
    }

    #[test]
    fn the_pacer_keeps_its_rate_and_drops_slots_older_than_its_catch_up() {
        let start = Instant::now();
        let mut pacer = Pacer::new(Some(1_000.0), start).unwrap();
        let ms = Duration::from_millis;
        assert_eq!(pacer.slot(start), start);
        assert_eq!(pacer.slot(start), start + ms(1));
        // 3 ms late: the slot stays (sent at once), the next follows it.
        assert_eq!(pacer.slot(start + ms(5)), start + ms(2));
        assert_eq!(pacer.slot(start + ms(5)), start + ms(3));
        // 1 s late: the slots older than the catch-up are dropped.
        assert_eq!(pacer.slot(start + ms(1_004)), start + ms(904));
        assert!(Pacer::new(None, start).is_none());
    }

    /// Runs `run` (a generator) against a server that accepts (its backlog
    /// does) and never answers: it must fail with `TimedOut`.
    pub(crate) fn times_out_on_a_silent_server(run: fn(SocketAddr, &Plan) -> io::Result<Outcome>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let plan = Plan {
            stall_timeout: Duration::from_millis(300),
            ..plan(2, 64)
        };
        let err = run(listener.local_addr().unwrap(), &plan).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");
    }
}
