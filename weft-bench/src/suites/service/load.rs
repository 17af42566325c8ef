//! The load generator: hyper's HTTP/1 client on a current-thread tokio
//! runtime of its own, on the suite's thread (outside the server's
//! process), the same for every server.
//!
//! Two shapes ([`Shape`]):
//! * **Closed loop** on one path: C keep-alive connections, each sending
//!   its next request as soon as the last answer's body is in; a
//!   request's latency runs from its send.
//! * **Seed 004**: point reads in *open* loop, `GET /users/{random}` at
//!   Poisson arrivals (the mixed suite's seeded schedule), each on an idle
//!   keep-alive connection (a new one if none is idle), its latency from
//!   its *arrival* (so a late answer cannot slow the arrivals and hide
//!   itself); beside them R closed-loop `GET /report?ms=N` clients. A
//!   pacer thread sleeps until each arrival and hands it to the runtime.
//!   The point reads' connections are a bounded pool, as an HTTP client's:
//!   at most [`OPEN_LOOP_CONNECTIONS`] requests are out at once (an
//!   arrival beyond them waits for a turn, its latency running), and a
//!   connection idle for [`IDLE_TIMEOUT`] is closed, so the extra
//!   connections a latency spike opened close once it has passed.
//!
//! Invariants:
//! * A request counts (latency, and `finished` if it ended inside the
//!   window) iff it *started* inside the window (`warm_end ≤ start <
//!   end`; an arrival is a start). Every answer, warm-up included, must be
//!   `200` with the body the shape expects; anything else (a refused
//!   connection, another status, a body without the marker) counts in
//!   `errors`, and the run goes on.
//! * After `end` nothing new starts; the requests still out are awaited
//!   up to the drain deadline, then counted in `unfinished` with their
//!   latency so far.
//! * CPU is read at `warm_end` and `end`: the server's process
//!   (`/proc/PID/stat`), this process's (the generator), and the
//!   machine's, from which the others' share is the rest.
//! * A server that finishes nothing for `stall_timeout` fails the run.
//! * In a soak ([`Plan::soak`]) a request unanswered after the soak's
//!   request timeout is a timeout error (its connection dropped), and the
//!   controller samples the server every interval ([`super::soak`]).

use std::collections::{HashMap, VecDeque};
use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode, header};
use hyper_util::rt::TokioIo;

mod client;
mod open;
mod sampler;

use super::server::{Server, process_cpu};
use super::soak::{
    ErrorKind as Failed, Errors, Resources, Sample, Soak, SoakConfig, threads_by_kind,
};
use crate::common::figure::skew::Readings;
use crate::common::latency::Recorder;
use crate::common::measure::Span;
use crate::common::others;
use crate::common::schedule::Poisson;

use client::{connect, fetch, get, within};
use open::open_loop;
use sampler::Sampler;

/// The most point reads out at once, so the most open-loop connections:
/// 1,000 a second answered in 100 ms each.
pub const OPEN_LOOP_CONNECTIONS: usize = 100;
/// An open-loop connection idle this long is closed (under weft's
/// `serve`'s 30 s header-read timeout, so the client closes first).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the generator sends.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// `connections` closed loops on `path`; each body must contain `marker`.
    Closed {
        path: &'static str,
        connections: usize,
        marker: &'static str,
    },
    /// Seed 004 over HTTP: `/users/{random}` at `users_per_s` (Poisson,
    /// seeded), beside `reporters` closed loops on `/report?ms={report_ms}`.
    Seed004 {
        users_per_s: f64,
        reporters: usize,
        report_ms: u64,
        seed: u64,
    },
}

/// How long a run lasts.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub warmup: Duration,
    pub measure: Duration,
    pub drain_timeout: Duration,
    pub stall_timeout: Duration,
    /// A soak's sampling and request timeout (its `duration` is `measure`).
    pub soak: Option<SoakConfig>,
}

/// What a run measured.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The measured requests' latencies (the closed loop's; the open
    /// loop's point reads, from their arrival).
    pub latency: Recorder,
    /// Measured requests that finished inside the window.
    pub finished: u64,
    /// `/report` answers that finished inside the window.
    pub reports: u64,
    /// Failed requests and wrong answers over the whole run.
    pub errors: u64,
    /// The first of them, as text.
    pub first_error: Option<String>,
    /// Them by kind.
    pub errors_by_kind: Errors,
    /// A soak's samples and verdict.
    pub soak: Option<Soak>,
    /// The window, the *server's* CPU over it, measured requests of the
    /// window still out after the drain, the others' share.
    pub readings: Readings,
    /// This process's CPU between the readings at the window's edges.
    pub generator_cpu: Duration,
}

/// Runs `shape` against `server` for `plan`, from the calling thread.
pub fn run(server: &Server, shape: &Shape, plan: &Plan) -> io::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    // Dropping the runtime cancels whatever is still running and closes
    // every connection.
    runtime.block_on(generate(server, shape, plan))
}

/// What the request tasks and the controller share (one thread: the lock
/// is never contended).
struct Shared {
    state: Mutex<State>,
    address: SocketAddr,
    span: Span,
    /// A soak's request timeout.
    request_timeout: Option<Duration>,
    /// Turns for the point reads: [`OPEN_LOOP_CONNECTIONS`].
    turns: Arc<tokio::sync::Semaphore>,
    /// Connections open now, all loops together.
    connections: Arc<AtomicUsize>,
}

/// A failed request: what it ran into, and the message.
struct Failure {
    kind: Failed,
    text: String,
    /// The request never left: its connection was found closed.
    unsent: bool,
}

impl Failure {
    fn io(text: impl ToString) -> Failure {
        Failure {
            kind: Failed::Io,
            text: text.to_string(),
            unsent: false,
        }
    }
}

#[derive(Default)]
struct State {
    outcome: Outcome,
    /// Measured requests out, by id: when each started.
    out: HashMap<u64, Instant>,
    next_id: u64,
    last_progress: Option<Instant>,
    /// Idle keep-alive connections of the open loop, the longest idle
    /// first.
    idle: VecDeque<Idle>,
    /// Point reads and `/report`s answered since the load started (a
    /// soak's samples take their differences).
    users_answered: u64,
    reports_answered: u64,
    /// The point reads' latencies since the last sample (soak only).
    since_sample: Recorder,
}

/// An open connection, counted in [`Shared::connections`] until dropped
/// (which closes it).
struct Conn {
    sender: SendRequest<Empty<Bytes>>,
    open: Arc<AtomicUsize>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection in the open loop's pool, and since when it is idle.
struct Idle {
    conn: Conn,
    since: Instant,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request started at `started` (counted iff `measured`) ended at
    /// `now` with `result`.
    fn finish(&self, id: Option<u64>, started: Instant, result: Result<(), Failure>) -> Instant {
        let now = Instant::now();
        let mut state = self.lock();
        if let Some(id) = id {
            state.out.remove(&id);
        }
        match result {
            Ok(()) => {
                state.last_progress = Some(now);
                match id {
                    Some(_) => state.users_answered += 1,
                    None => state.reports_answered += 1,
                }
                if id.is_some() && self.request_timeout.is_some() {
                    state.since_sample.record(now - started);
                }
                if id.is_some() && self.span.contains(started) {
                    state.outcome.latency.record(now - started);
                }
                if self.span.contains(now) {
                    match id {
                        Some(_) => state.outcome.finished += 1,
                        None => state.outcome.reports += 1,
                    }
                }
            }
            Err(why) => {
                state.outcome.errors += 1;
                state.outcome.errors_by_kind.count(why.kind);
                state.outcome.first_error.get_or_insert(why.text);
            }
        }
        now
    }

    /// Registers a measured request started at `started`.
    fn start(&self, started: Instant) -> Option<u64> {
        let mut state = self.lock();
        let id = state.next_id;
        state.next_id += 1;
        state.out.insert(id, started);
        Some(id)
    }
}

async fn generate(server: &Server, shape: &Shape, plan: &Plan) -> io::Result<Outcome> {
    let address = server.address;
    // The closed loops' connections open before the clock starts.
    let (loops, path, marker, reporters) = match *shape {
        Shape::Closed {
            path,
            connections,
            marker,
        } => (connections, path.to_owned(), marker, 0),
        Shape::Seed004 {
            reporters,
            report_ms,
            ..
        } => (0, format!("/report?ms={report_ms}"), "\"ms\":", reporters),
    };
    let connections = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::new();
    for _ in 0..loops + reporters {
        senders.push(connect(address, &connections).await?);
    }
    let start = Instant::now();
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            last_progress: Some(start),
            ..State::default()
        }),
        address,
        span: Span::after(start, plan.warmup, plan.measure),
        request_timeout: plan.soak.as_ref().map(|soak| soak.request_timeout),
        turns: Arc::new(tokio::sync::Semaphore::new(OPEN_LOOP_CONNECTIONS)),
        connections,
    });
    shared.lock().outcome.readings.window = plan.measure;
    let mut tasks = Vec::new();
    for (index, sender) in senders.into_iter().enumerate() {
        let measured = index < loops;
        let (shared, path) = (Arc::clone(&shared), path.clone());
        tasks.push(tokio::spawn(async move {
            closed_loop(sender, &shared, &path, marker, measured).await;
        }));
    }
    if let Shape::Seed004 {
        users_per_s, seed, ..
    } = *shape
    {
        tasks.push(open_loop(Arc::clone(&shared), start, users_per_s, seed));
    }
    let result = control(&shared, server, plan, start).await;
    for task in tasks {
        task.abort();
    }
    result?;
    Ok(std::mem::take(&mut shared.lock().outcome))
}

/// Warm-up, window and drain: reads the CPU at the window's edges, waits
/// for the requests still out, fails the run on a stall; in a soak, samples
/// the server from `start` (the load's) every interval and when the window
/// closes.
async fn control(shared: &Shared, server: &Server, plan: &Plan, start: Instant) -> io::Result<()> {
    let mut sampler = plan
        .soak
        .as_ref()
        .map(|soak| Sampler::new(soak, server, start));
    while Instant::now() < shared.span.warm_end {
        if let Some(sampler) = &mut sampler {
            sampler.sample_if_due(shared, Instant::now()).await;
        }
        let left = shared
            .span
            .warm_end
            .saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(Duration::from_millis(10))).await;
    }
    let cpu = |server: &Server| Some((server.cpu()?, process_cpu(std::process::id())?));
    let at_start = (Instant::now(), cpu(server), others::CpuTimes::now());
    let drain_deadline = shared.span.end + plan.drain_timeout;
    let mut closed = false;
    loop {
        let now = Instant::now();
        if let Some(sampler) = &mut sampler {
            if !closed && now >= shared.span.end {
                sampler.sample(shared, now).await;
                let soak = plan.soak.as_ref().expect("a sampler is a soak's");
                let samples = std::mem::take(&mut sampler.samples);
                shared.lock().outcome.soak = Some(Soak::judge(samples, soak));
            } else if !closed {
                sampler.sample_if_due(shared, now).await;
            }
        }
        if !closed && now >= shared.span.end {
            closed = true;
            let window = now - at_start.0;
            let mut state = shared.lock();
            let outcome = &mut state.outcome;
            outcome.readings.cpu_window = window;
            if let (Some((server0, own0)), Some((server1, own1))) = (at_start.1, cpu(server)) {
                outcome.readings.cpu = server1.saturating_sub(server0);
                outcome.generator_cpu = own1.saturating_sub(own0);
                // `others` counts everything but this process: take the
                // server out too.
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
                let server_pct =
                    outcome.readings.cpu.as_secs_f64() / window.as_secs_f64().max(1e-9) / cores
                        * 100.0;
                outcome.readings.others_cpu_pct =
                    others::since(at_start.2).map(|pct| (pct - server_pct).max(0.0));
            }
        }
        if let Some(verdict) = check(shared, now, closed, drain_deadline, plan) {
            return verdict;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The controller's checks at `now`: `Some` when the run is over (every
/// request of a closed window answered, or the drain deadline passed: the
/// ones still out are censored) or has stalled.
fn check(
    shared: &Shared,
    now: Instant,
    closed: bool,
    drain_deadline: Instant,
    plan: &Plan,
) -> Option<io::Result<()>> {
    let mut state = shared.lock();
    if closed && state.out.is_empty() {
        return Some(Ok(()));
    }
    if now >= drain_deadline {
        let out = std::mem::take(&mut state.out);
        for started in out.into_values().filter(|&s| shared.span.contains(s)) {
            state.outcome.readings.unfinished += 1;
            state.outcome.latency.record(now - started);
        }
        return Some(Ok(()));
    }
    let last = state.last_progress.unwrap_or(now);
    if now.saturating_duration_since(last) >= plan.stall_timeout {
        return Some(Err(io::Error::new(
            ErrorKind::TimedOut,
            format!(
                "no answer for {:?} ({} requests out): the server looks hung",
                plan.stall_timeout,
                state.out.len()
            ),
        )));
    }
    None
}

/// One connection's closed loop on `path` until the window's end;
/// `measured`: its requests are the run's figures (else `/report`s).
async fn closed_loop(mut conn: Conn, shared: &Shared, path: &str, marker: &str, measured: bool) {
    loop {
        let started = Instant::now();
        if started >= shared.span.end {
            return;
        }
        let id = if measured {
            shared.start(started)
        } else {
            None
        };
        let result = within(shared, get(&mut conn.sender, shared.address, path, marker)).await;
        let failed = result.is_err();
        shared.finish(id, started, result);
        if failed {
            // A fresh connection, after a pause (a server that refuses
            // is not hammered).
            tokio::time::sleep(Duration::from_millis(10)).await;
            match connect(shared.address, &shared.connections).await {
                Ok(fresh) => conn = fresh,
                Err(_) => continue,
            }
        }
    }
}
