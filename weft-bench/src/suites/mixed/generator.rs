//! The generator: one thread outside the runtime that submits every
//! request through the runtime's handle, receives every completion on a
//! std channel, records latencies and, in closed loop, resubmits.
//!
//! Why outside: a client loop running *inside* the runtime stays on the
//! worker it first landed on, and the result then measures where the
//! clients happened to start (DESIGN.md); from outside, every request
//! takes the same path into the runtime (its inject queue), on every
//! runtime alike.
//!
//! A request is one task whose only poll stamps `started`, burns its CPU
//! ([`Burner::burn`]), stamps `finished` and sends a [`Completion`]: it
//! never awaits, so the runtime cannot split it. Timeline of a run:
//!
//! ```text
//! start ── warm-up ──▶ warm_end ── measured window ──▶ end ── drain ──▶ done
//! ```
//!
//! Invariants:
//! * A request's latency is recorded iff it was *due* inside the window
//!   (`warm_end ≤ due < end`), where due is its submission in closed loop
//!   and its scheduled arrival in open loop, so generator lag counts
//!   against the runtime instead of being hidden. After `end` nothing new
//!   is submitted and the generator waits for every outstanding request,
//!   so the slowest requests of the window are recorded too (stopping at
//!   `end` would drop exactly the tail). One still unfinished at the drain
//!   deadline is recorded as censored: its latency so far, a lower bound,
//!   and counted in `unfinished` of [`Outcome::readings`].
//! * Throughput counts the completions that *finished* inside the window
//!   (their timestamps decide, so the window is exactly `measure` long).
//! * The CPU figure is the process's CPU (every thread: workers, generator,
//!   any helper thread of the runtime) between the generator's readings at
//!   `warm_end` and `end`, both of which are wake-up deadlines of its loop;
//!   so are the threads the runtime started, when it counts them.

use std::collections::HashMap;
use std::io;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use super::burn::Burner;
use crate::common::figure::skew::Readings;
use crate::common::latency::Recorder;
use crate::common::measure::Span;
use crate::common::measure::process_cpu_time;
use crate::common::others;
use crate::common::runtimes::Spawner;
use crate::common::schedule::Poisson;

/// Short or long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A short request (~150 µs of CPU).
    Short,
    /// A long request (~50 ms of CPU).
    Long,
}

/// What a request's task sends back when its poll is done.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    /// Short or long.
    pub kind: Kind,
    /// The request's number, unique within a run.
    pub id: u64,
    /// The closed-loop client that sent it (`None`: an open-loop arrival).
    pub client: Option<u32>,
    /// When it was due: submitted (closed loop) or scheduled (open loop).
    pub due: Instant,
    /// When the generator handed it to the runtime (after `due` when the
    /// generator was late).
    pub submitted: Instant,
    /// When its poll began.
    pub started: Instant,
    /// When its poll ended.
    pub finished: Instant,
}

/// How one run generates load.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Closed-loop short clients (each with one request outstanding).
    pub short_clients: u32,
    /// Open-loop short arrivals a second (Poisson); `None`: closed loop.
    pub short_rate_per_s: Option<f64>,
    /// Closed-loop long clients.
    pub long_clients: u32,
    /// CPU a short request burns.
    pub short_cpu: Duration,
    /// CPU a long request burns.
    pub long_cpu: Duration,
    /// Excluded from every figure.
    pub warmup: Duration,
    /// The measured window.
    pub measure: Duration,
    /// Longest wait after the window for the requests still outstanding.
    pub drain_timeout: Duration,
    /// The open loop's schedule seed.
    pub seed: u64,
    /// Before an open-loop arrival, the generator stops sleeping this long
    /// ahead and spins (receiving completions meanwhile): a sleep can
    /// overshoot by tens of µs even with the timer slack at 1 ns.
    pub spin: Duration,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Latencies of the short requests due inside the window.
    pub short: Recorder,
    /// Latencies of the long requests due inside the window.
    pub long: Recorder,
    /// Short requests that finished inside the window.
    pub short_finished: u64,
    /// Long requests that finished inside the window.
    pub long_finished: u64,
    /// The window, the process's CPU over it, requests of the window
    /// still outstanding at the drain deadline, the others' share.
    pub readings: Readings,
    /// Open loop: how late the generator submitted each arrival of the
    /// window after its scheduled time (part of that arrival's latency).
    pub submit_lag: Option<Recorder>,
    /// Open loop: the short requests' latencies from their submission,
    /// the runtime's part of `short` without the generator's lateness.
    pub short_from_submit: Option<Recorder>,
    /// weft's stall-monitor counters over the whole run (warm-up and
    /// drain included), read after it; `None` for the peers.
    pub monitor: Option<Vec<(&'static str, u64)>>,
    /// Threads the runtime started between the readings at the window's
    /// start and end; `None` if it does not count them.
    pub threads_started: Option<u64>,
}

/// What the generator hands its requests to: a runtime's spawner (which is
/// not told the request's kind, as a service's runtime is not), or the
/// suite's oracle ([`super::oracle::Oracle`]), which is.
pub trait Submit {
    /// Starts `request`, a future that completes at its first poll.
    fn submit(&self, kind: Kind, request: impl Future<Output = ()> + Send + 'static);
}

impl<S: Spawner> Submit for S {
    fn submit(&self, _kind: Kind, request: impl Future<Output = ()> + Send + 'static) {
        self.spawn_detached(request);
    }
}

/// Runs the plan against a runtime through `spawner`, from the calling
/// thread (which must not be one of the runtime's).
pub fn run<S: Submit>(spawner: &S, burner: Burner, plan: &Plan) -> io::Result<Outcome> {
    run_counting(spawner, burner, plan, &|| None)
}

/// [`run`], with `threads_started` read at the window's edges: the threads
/// the runtime started so far, if it counts them.
pub fn run_counting<S: Submit>(
    spawner: &S,
    burner: Burner,
    plan: &Plan,
    threads_started: &dyn Fn() -> Option<u64>,
) -> io::Result<Outcome> {
    tighten_timer_slack();
    let (sender, receiver) = mpsc::channel();
    let start = Instant::now();
    let mut generator = Generator {
        spawner,
        burner,
        plan,
        sender,
        span: Span::after(start, plan.warmup, plan.measure),
        next_id: 0,
        outstanding: HashMap::new(),
        outcome: Outcome {
            submit_lag: plan.short_rate_per_s.map(|_| Recorder::new()),
            short_from_submit: plan.short_rate_per_s.map(|_| Recorder::new()),
            ..Outcome::default()
        },
        resubmit: true,
    };
    for client in 0..plan.short_clients {
        generator.submit(Kind::Short, Some(client), Instant::now());
    }
    for client in 0..plan.long_clients {
        generator.submit(Kind::Long, Some(client), Instant::now());
    }
    let schedule = plan
        .short_rate_per_s
        .map(|rate| Poisson::new(rate, plan.seed));
    generator.generate(start, schedule, &receiver, threads_started)?;
    generator.drain(&receiver);
    Ok(generator.outcome)
}

struct Generator<'a, S> {
    spawner: &'a S,
    burner: Burner,
    plan: &'a Plan,
    sender: Sender<Completion>,
    /// The warm-up's end and the window's.
    span: Span,
    next_id: u64,
    /// Every request submitted and not yet completed: its kind and due time.
    outstanding: HashMap<u64, (Kind, Instant)>,
    outcome: Outcome,
    /// Whether closed-loop clients resubmit (until `end`).
    resubmit: bool,
}

impl<S: Submit> Generator<'_, S> {
    /// Submits one request due at `due`.
    fn submit(&mut self, kind: Kind, client: Option<u32>, due: Instant) {
        let id = self.next_id;
        self.next_id += 1;
        self.outstanding.insert(id, (kind, due));
        let cpu = match kind {
            Kind::Short => self.plan.short_cpu,
            Kind::Long => self.plan.long_cpu,
        };
        let (burner, sender) = (self.burner, self.sender.clone());
        let submitted = Instant::now();
        // One poll, no await: the request cannot be split by the runtime.
        self.spawner.submit(kind, async move {
            let started = Instant::now();
            burner.burn(cpu);
            let finished = Instant::now();
            // The generator is gone only after its drain deadline passed.
            let _ = sender.send(Completion {
                kind,
                id,
                client,
                due,
                submitted,
                started,
                finished,
            });
        });
    }

    /// Records a completion and, in closed loop, resubmits for its client.
    fn complete(&mut self, done: Completion) {
        self.outstanding.remove(&done.id);
        if self.span.contains(done.due) {
            let latency = done.finished.saturating_duration_since(done.due);
            match done.kind {
                Kind::Short => self.outcome.short.record(latency),
                Kind::Long => self.outcome.long.record(latency),
            }
            if let (Kind::Short, Some(from_submit)) =
                (done.kind, &mut self.outcome.short_from_submit)
            {
                from_submit.record(done.finished.saturating_duration_since(done.submitted));
            }
        }
        if self.span.contains(done.finished) {
            match done.kind {
                Kind::Short => self.outcome.short_finished += 1,
                Kind::Long => self.outcome.long_finished += 1,
            }
        }
        if let Some(client) = done.client.filter(|_| self.resubmit) {
            self.submit(done.kind, Some(client), Instant::now());
        }
    }

    /// The warm-up and the window: submits open-loop arrivals on time,
    /// handles completions, reads the CPU at `warm_end` and `end`.
    fn generate(
        &mut self,
        start: Instant,
        mut schedule: Option<Poisson>,
        receiver: &Receiver<Completion>,
        threads_started: &dyn Fn() -> Option<u64>,
    ) -> io::Result<()> {
        type Start = (Instant, Duration, Option<others::CpuTimes>, Option<u64>);
        let mut window_start: Option<Start> = None;
        loop {
            let now = Instant::now();
            if window_start.is_none() && now >= self.span.warm_end {
                let cpu = process_cpu_time()?;
                window_start = Some((now, cpu, others::CpuTimes::now(), threads_started()));
            }
            // Arrivals due by now are submitted before the window can close:
            // a generator thread kept off its core past the end still
            // submits every arrival of the window (late, as its lag shows).
            while let Some(arrivals) = schedule.as_mut() {
                let due = start + arrivals.peek();
                if due > now || due >= self.span.end {
                    break;
                }
                arrivals.pop();
                self.submit(Kind::Short, None, due);
                if let (true, Some(lag)) = (self.span.contains(due), &mut self.outcome.submit_lag) {
                    lag.record(Instant::now().saturating_duration_since(due));
                }
            }
            if now >= self.span.end {
                let (at, cpu, others_start, threads) =
                    window_start.unwrap_or((now, Duration::ZERO, None, None));
                self.outcome.threads_started = threads
                    .zip(threads_started())
                    .map(|(before, after)| after.saturating_sub(before));
                self.outcome.readings.cpu = process_cpu_time()?.saturating_sub(cpu);
                self.outcome.readings.cpu_window = now.saturating_duration_since(at);
                self.outcome.readings.window = self.plan.measure;
                self.outcome.readings.others_cpu_pct = others::since(others_start);
                self.resubmit = false;
                return Ok(());
            }
            let mut deadline = self.span.end;
            if window_start.is_none() {
                deadline = deadline.min(self.span.warm_end);
            }
            let spin = match &schedule {
                Some(arrivals) => {
                    deadline = deadline.min(start + arrivals.peek());
                    self.plan.spin
                }
                None => Duration::ZERO,
            };
            self.wait(receiver, deadline, spin);
        }
    }

    /// Handles completions until `deadline`: asleep in `recv_timeout` until
    /// `spin` before it, then polling the channel.
    fn wait(&mut self, receiver: &Receiver<Completion>, deadline: Instant, spin: Duration) {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining > spin {
            match receiver.recv_timeout(remaining - spin) {
                Ok(done) => self.complete(done),
                // The generator holds a sender: never disconnected.
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        } else {
            match receiver.try_recv() {
                Ok(done) => self.complete(done),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => std::hint::spin_loop(),
            }
        }
    }

    /// After `end`: waits for every outstanding request, up to the drain
    /// timeout, then records those of the window still missing as censored.
    fn drain(&mut self, receiver: &Receiver<Completion>) {
        let deadline = Instant::now() + self.plan.drain_timeout;
        while !self.outstanding.is_empty() {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match receiver.recv_timeout(remaining) {
                Ok(done) => self.complete(done),
                Err(_) => break,
            }
        }
        let now = Instant::now();
        let missing: Vec<(Kind, Instant)> = self.outstanding.drain().map(|(_, v)| v).collect();
        for (kind, due) in missing {
            if self.span.contains(due) {
                self.outcome.readings.unfinished += 1;
                let so_far = now.saturating_duration_since(due);
                match kind {
                    Kind::Short => self.outcome.short.record(so_far),
                    Kind::Long => self.outcome.long.record(so_far),
                }
            }
        }
    }
}

/// Sets this thread's timer slack to 1 ns (Linux), so that its
/// `recv_timeout` wakes when asked rather than up to the default 50 µs
/// later: open-loop arrivals are then submitted on time with a short spin.
fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long and affects only
    // the calling thread; no pointer is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::runtimes::{BenchRuntime, Tokio, Tuning};

    fn plan() -> Plan {
        Plan {
            short_clients: 4,
            short_rate_per_s: None,
            long_clients: 1,
            short_cpu: Duration::from_micros(50),
            long_cpu: Duration::from_millis(2),
            warmup: Duration::from_millis(20),
            // Long enough for several long requests even when other tests
            // (or other processes) share the cores.
            measure: Duration::from_millis(300),
            drain_timeout: Duration::from_secs(5),
            seed: 1,
            spin: Duration::from_micros(20),
        }
    }

    #[test]
    fn a_closed_loop_records_and_counts_both_kinds() {
        let rt = Tokio::build(2, Tuning::default()).unwrap();
        let burner = Burner::calibrate();
        let outcome = run(&rt.spawner(), burner, &plan()).unwrap();
        assert!(outcome.short.count() > 0 && outcome.long.count() > 0);
        assert!(outcome.short_finished > 0 && outcome.long_finished > 0);
        assert_eq!(outcome.readings.unfinished, 0);
        assert_eq!(outcome.readings.window, Duration::from_millis(300));
        assert!(outcome.readings.cpu_window > Duration::from_millis(200));
        assert!(outcome.submit_lag.is_none());
        assert!(outcome.short_from_submit.is_none());
    }

    #[test]
    fn an_open_loop_submits_about_the_rate() {
        let rt = Tokio::build(2, Tuning::default()).unwrap();
        let burner = Burner::calibrate();
        let plan = Plan {
            short_clients: 0,
            short_rate_per_s: Some(1_000.0),
            ..plan()
        };
        let outcome = run(&rt.spawner(), burner, &plan).unwrap();
        // 300 expected; Poisson's spread over 300 is about ±17 (1σ).
        let shorts = outcome.short.count();
        assert!((200..400).contains(&shorts), "{shorts} arrivals");
        assert_eq!(outcome.submit_lag.unwrap().count(), shorts);
        assert_eq!(outcome.short_from_submit.unwrap().count(), shorts);
    }
}
