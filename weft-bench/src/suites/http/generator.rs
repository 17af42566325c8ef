//! The load generator: hyper's HTTP/1 client on one thread of its own, the
//! same code for every server, so that the servers are all that differs
//! between runs.
//!
//! The thread runs a current-thread tokio runtime (I/O and time drivers)
//! that belongs to the generator, not to any server. It opens C
//! connections (`tokio::net::TcpStream`, `TCP_NODELAY`, hyper-util's
//! `TokioIo`), shakes hands with `hyper::client::conn::http1::handshake`
//! on each and spawns the connection futures, then runs one closed loop
//! per connection as a task: `GET /` with a `Host` header, await the
//! response and its whole body, check `200 OK` and the body byte for byte
//! ([`BODY`]), record the request's latency and send the next one at once.
//!
//! The echo suite's invariants hold (`echo/generator.rs`), with the same
//! [`Outcome`]:
//! * A request's latency runs from just before `send_request` to just
//!   after the last byte of its body is in, and is recorded iff it
//!   *started* inside the window (`warm_end ≤ start < end`). After `end` no
//!   connection sends again and the generator waits for every request
//!   still out; one still out at the drain deadline counts with its
//!   latency so far in `unfinished` of [`Outcome::readings`].
//! * Throughput counts the requests that *finished* inside the window.
//! * The CPU figures are read by the controller (the `block_on` future) at
//!   its wake-ups at `warm_end` and `end` (tokio's timer: within about a
//!   millisecond; the wall time between the readings is what CPU is
//!   divided by).
//! * The generator never waits without a deadline: a server that answers
//!   no request for [`Plan::stall_timeout`] fails the run with
//!   `TimedOut`, a wrong answer with `InvalidData`.
//!
//! All tasks share one thread, so a latency includes the time a finished
//! response waits for the generator to get to it: near a whole core of
//! generator CPU (reported beside the process's), the generator and not
//! the server bounds the figures.

use std::io::{self, ErrorKind};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, StatusCode, header};
use hyper_util::rt::TokioIo;
use tokio::sync::Notify;

use super::server::BODY;
use crate::common::measure::Span;
use crate::serve::load::{Outcome, Pacer, Phases, Plan};

/// Runs the plan against the server at `address` from the calling thread.
pub fn run(address: SocketAddr, plan: &Plan) -> io::Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    // Dropping the runtime at the end cancels the request loops and the
    // connections, which closes every socket.
    runtime.block_on(generate(address, plan))
}

/// What the request loops and the controller share (one thread: the lock
/// is never contended).
struct State {
    /// When each connection's request went out; `None`: none is out.
    started: Vec<Option<Instant>>,
    /// When a request last finished (or the run started).
    last_progress: Instant,
    /// The first error of any connection.
    failure: Option<io::Error>,
    outcome: Outcome,
    /// The send slots at a fixed rate, if the plan has one.
    pacer: Option<Pacer>,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the controller: a connection ended (done or failed).
    ended: Notify,
    span: Span,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn hyper_error(err: hyper::Error) -> io::Error {
    io::Error::other(err)
}

async fn generate(address: SocketAddr, plan: &Plan) -> io::Result<Outcome> {
    let mut senders = Vec::with_capacity(plan.connections);
    for _ in 0..plan.connections {
        let stream = tokio::net::TcpStream::connect(address).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) = http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
            .await
            .map_err(hyper_error)?;
        // Ends when its sender is dropped or the server closes; an error
        // shows up at the sender.
        tokio::spawn(connection);
        senders.push(sender);
    }
    let start = Instant::now();
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            started: vec![None; plan.connections],
            last_progress: start,
            failure: None,
            outcome: Outcome::over(plan),
            pacer: Pacer::new(plan.options.rate_per_s, start),
        }),
        ended: Notify::new(),
        span: Span::after(start, plan.warmup, plan.measure),
    });
    let host = address.to_string();
    let loops: Vec<_> = senders
        .into_iter()
        .enumerate()
        .map(|(index, sender)| {
            let (shared, host) = (Arc::clone(&shared), host.clone());
            tokio::spawn(async move {
                let result = request_loop(index, sender, &shared, &host).await;
                if let Err(err) = result {
                    shared.lock().failure.get_or_insert(err);
                }
                shared.ended.notify_one();
            })
        })
        .collect();
    let result = control(&shared, &loops, plan).await;
    for task in loops {
        task.abort();
    }
    result?;
    let mut state = shared.lock();
    Ok(std::mem::take(&mut state.outcome))
}

/// The warm-up, the window and the drain: wakes at each deadline (and
/// whenever a connection ends), reads the CPU at `warm_end` and `end`,
/// fails the run on a connection's error or a stall.
async fn control(
    shared: &Shared,
    loops: &[tokio::task::JoinHandle<()>],
    plan: &Plan,
) -> io::Result<()> {
    let mut phases = Phases::new(shared.span);
    loop {
        let now = Instant::now();
        phases.step(now, plan, &mut shared.lock().outcome)?;
        let drain_deadline = phases.drain_deadline;
        let done = drain_deadline.is_some() && loops.iter().all(|task| task.is_finished());
        let Some(stalled_at) = check(shared, now, done, drain_deadline, plan)? else {
            return Ok(());
        };
        let deadline = phases.next(stalled_at);
        let sleep = tokio::time::sleep_until(deadline.into());
        futures_lite::future::or(sleep, shared.ended.notified()).await;
    }
}

/// The controller's checks at `now`: a connection's error, the end of the
/// drain (every loop `done`, or its deadline passed: then the requests
/// still out are censored), a stall. `None` when the run is over, else
/// when it would count as stalled.
fn check(
    shared: &Shared,
    now: Instant,
    done: bool,
    drain_deadline: Option<Instant>,
    plan: &Plan,
) -> io::Result<Option<Instant>> {
    let mut state = shared.lock();
    if let Some(err) = state.failure.take() {
        return Err(err);
    }
    if done {
        return Ok(None);
    }
    if drain_deadline.is_some_and(|deadline| now >= deadline) {
        censor(shared, &mut state, now);
        return Ok(None);
    }
    let stalled_at = state.last_progress + plan.stall_timeout;
    if now >= stalled_at {
        let waiting = state.started.iter().filter(|s| s.is_some()).count();
        return Err(io::Error::new(
            ErrorKind::TimedOut,
            format!(
                "no response came back for {:?} ({waiting} of {} connections waiting): the \
                 server looks hung",
                plan.stall_timeout,
                state.started.len()
            ),
        ));
    }
    Ok(Some(stalled_at))
}

/// At the drain deadline: the window's requests still out count with
/// their latency so far.
fn censor(shared: &Shared, state: &mut State, now: Instant) {
    let State {
        started, outcome, ..
    } = state;
    for started in started.iter_mut().filter_map(Option::take) {
        if shared.span.contains(started) {
            outcome.readings.unfinished += 1;
            outcome
                .latency
                .record(now.saturating_duration_since(started));
        }
    }
}

/// Connection `index`'s closed loop, until the window's end.
async fn request_loop(
    index: usize,
    mut sender: SendRequest<Empty<Bytes>>,
    shared: &Shared,
    host: &str,
) -> io::Result<()> {
    loop {
        let slot = shared.lock().pacer.as_mut().map(|p| p.slot(Instant::now()));
        if let Some(at) = slot {
            tokio::time::sleep_until(at.into()).await;
        }
        sender.ready().await.map_err(hyper_error)?;
        let request = Request::get("/")
            .header(header::HOST, host)
            .body(Empty::new())
            .map_err(io::Error::other)?;
        let started = Instant::now();
        if started >= shared.span.end {
            return Ok(());
        }
        shared.lock().started[index] = Some(started);
        let response = sender.send_request(request).await.map_err(hyper_error)?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(hyper_error)?
            .to_bytes();
        if status != StatusCode::OK || body != BODY {
            return Err(io::Error::new(
                ErrorKind::InvalidData,
                format!("the server answered {status} with a {} B body", body.len()),
            ));
        }
        let now = Instant::now();
        let mut state = shared.lock();
        state.last_progress = now;
        state.started[index] = None;
        if shared.span.contains(started) {
            state
                .outcome
                .latency
                .record(now.saturating_duration_since(started));
        }
        if shared.span.contains(now) {
            state.outcome.finished += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::load::tests as load_tests;

    fn plan(connections: usize) -> Plan {
        load_tests::plan(connections, 0)
    }

    /// A blocking HTTP/1.1 server, a thread per connection, answering
    /// each request (a GET without a body) with `body`.
    fn thread_server(body: &'static [u8]) -> SocketAddr {
        load_tests::thread_server(
            move |pending: &mut Vec<u8>, read: &[u8], out: &mut Vec<u8>| {
                pending.extend_from_slice(read);
                while let Some(at) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                    pending.drain(..at + 4);
                    let head = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n", body.len());
                    out.extend_from_slice(head.as_bytes());
                    out.extend_from_slice(body);
                }
            },
        )
    }

    #[test]
    fn a_closed_loop_against_a_thread_server_counts_and_records() {
        let outcome = run(thread_server(BODY), &plan(4)).unwrap();
        load_tests::closed_loop_measured(&outcome);
    }

    #[test]
    fn a_wrong_body_fails_the_run() {
        // The first wrong answer ends the run; a long window only keeps a
        // loaded machine (a connection slower than the usual window) from
        // ending it before any answer.
        let plan = Plan {
            measure: std::time::Duration::from_secs(30),
            ..plan(1)
        };
        let err = run(thread_server(b"Hello, world?"), &plan).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
    }

    #[test]
    fn a_silent_server_times_out() {
        load_tests::times_out_on_a_silent_server(run);
    }
}
