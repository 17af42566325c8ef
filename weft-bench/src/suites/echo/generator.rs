//! The load generator: one thread, no runtime, the same code for every
//! server, so that the servers are all that differs between runs.
//!
//! It opens C connections to the server (blocking `connect`, then
//! nonblocking, `TCP_NODELAY`), registers each once with a `mio::Poll`
//! (edge-triggered, readable and writable) and runs them in closed loop:
//! each connection sends a message of N bytes, waits for all N bytes to
//! come back, records the round trip and sends the next one at once. The
//! echo is checked byte for byte against what was sent: a server that
//! loses, reorders or adds bytes fails the run instead of being measured.
//!
//! ```text
//! start ── warm-up ──▶ warm_end ── measured window ──▶ end ── drain ──▶ done
//! ```
//!
//! Invariants (those of the mixed lane's generator):
//! * A round trip's latency runs from just before its first byte is
//!   written to just after its last byte is read, and is recorded iff it
//!   *started* inside the window (`warm_end ≤ start < end`). After `end`
//!   no connection sends again and the generator waits for every round
//!   trip still out, so the window's slowest are recorded too; one still
//!   out at the drain deadline counts with its latency so far (a lower
//!   bound) in `unfinished` of [`Outcome::readings`].
//! * Throughput counts the round trips that *finished* inside the window.
//! * The CPU figure is the whole process's (server threads, any helper
//!   thread of the runtime, and this generator) between the generator's
//!   readings at `warm_end` and `end`, both wake-up deadlines of its loop.
//! * The generator never waits without a deadline: a server that answers
//!   nothing for [`Plan::stall_timeout`] fails the run with `TimedOut`.
//! * Its own thread's CPU over the window is reported beside the
//!   process's: near a whole core, the generator and not the server
//!   bounds the throughput.
//!
//! Edge-triggered readiness needs a read to go on until the socket says
//! `WouldBlock` *unless* the reader knows the socket is empty. Here it
//! does once a whole echo is in: the server only echoes, and everything
//! sent has come back, so nothing more can be waiting. A connection's read
//! loop therefore stops at a complete echo, after sending the next
//! message, and saves a `read` that would only say `WouldBlock` (a third
//! of the generator's system calls per round trip); the next echo's bytes
//! are a new edge. A write goes on until the socket says `WouldBlock` or
//! the message is out.

use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use std::collections::VecDeque;
use std::sync::Arc;

use super::cost::{Counts, Probe};
use crate::common::figure::skew::Readings;
use crate::common::measure::process_cpu_time;
use crate::suites::metrics::others;
use crate::suites::mixed::burn::thread_cpu_time;
use crate::suites::mixed::latency::Recorder;

/// How one run generates load (the HTTP lane's generator's too).
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

/// What a run may add to its closed loop (the HTTP lane's generator
/// takes them too).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// At most this many requests per second over all connections: each
    /// request waits for the next send slot ([`Pacer`]); `None`: closed
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

/// Runs the plan against the server at `address` from the calling thread.
pub fn run(address: SocketAddr, plan: &Plan) -> io::Result<Outcome> {
    let poll = Poll::new()?;
    let message: Vec<u8> = (0..plan.message_bytes).map(|i| (i % 251) as u8).collect();
    let mut connections = Vec::with_capacity(plan.connections);
    for index in 0..plan.connections {
        let stream = std::net::TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        let mut stream = TcpStream::from_std(stream);
        poll.registry().register(
            &mut stream,
            Token(index),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        connections.push(Connection {
            stream,
            sent: 0,
            received: 0,
            started: None,
        });
    }
    let start = Instant::now();
    let mut generator = Generator {
        connections,
        message,
        scratch: vec![0u8; 64 * 1024],
        span: Span::after(start, plan.warmup, plan.measure),
        last_progress: start,
        outcome: Outcome::over(plan),
        pacer: Pacer::new(plan.options.rate_per_s, start),
        waiting: VecDeque::new(),
    };
    for index in 0..generator.connections.len() {
        generator.send(index, start)?;
    }
    generator.generate(poll, plan)?;
    Ok(generator.outcome)
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

/// The readings at the window's start (the HTTP lane's generator takes
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

/// A run's measured window (every load generator's):
/// from the warm-up's end to its end. A request counts iff it started
/// inside it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    /// The warm-up's end, the window's start.
    pub(crate) warm_end: Instant,
    /// The window's end.
    pub(crate) end: Instant,
}

impl Span {
    /// The window `measure` long after `warmup` from `start`.
    pub(crate) fn after(start: Instant, warmup: Duration, measure: Duration) -> Span {
        let warm_end = start + warmup;
        let end = warm_end + measure;
        Span { warm_end, end }
    }

    /// Whether `at` is inside it.
    pub(crate) fn contains(&self, at: Instant) -> bool {
        self.warm_end <= at && at < self.end
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

/// One connection of the closed loop.
struct Connection {
    stream: TcpStream,
    /// Bytes of the current message written.
    sent: usize,
    /// Bytes of its echo read.
    received: usize,
    /// When the current round trip started; `None`: none is out.
    started: Option<Instant>,
}

struct Generator {
    connections: Vec<Connection>,
    /// What every connection sends.
    message: Vec<u8>,
    /// Where echoes are read into before they are checked.
    scratch: Vec<u8>,
    span: Span,
    /// When a round trip last finished (or the run started).
    last_progress: Instant,
    outcome: Outcome,
    /// The send slots at a fixed rate, if the plan has one.
    pacer: Option<Pacer>,
    /// Connections waiting for their slot, in slot order.
    waiting: VecDeque<(Instant, usize)>,
}

impl Generator {
    fn outstanding(&self) -> usize {
        self.connections
            .iter()
            .filter(|c| c.started.is_some())
            .count()
    }

    /// The warm-up, the window and the drain: waits on the poller until the
    /// next deadline, serves the connections it reports ready, reads the
    /// CPU at `warm_end` and `end`.
    fn generate(&mut self, mut poll: Poll, plan: &Plan) -> io::Result<()> {
        let mut events = Events::with_capacity(self.connections.len().max(16));
        let mut phases = Phases::new(self.span);
        loop {
            let now = Instant::now();
            if phases.step(now, plan, &mut self.outcome)? {
                self.waiting.clear();
            }
            if let Some(deadline) = phases.drain_deadline {
                if self.outstanding() == 0 {
                    return Ok(());
                }
                if now >= deadline {
                    self.censor(now);
                    return Ok(());
                }
            }
            let stalled_at = self.last_progress + plan.stall_timeout;
            if now >= stalled_at {
                return Err(io::Error::new(
                    ErrorKind::TimedOut,
                    format!(
                        "no echo came back for {:?} ({} of {} connections waiting): the server \
                         looks hung",
                        plan.stall_timeout,
                        self.outstanding(),
                        self.connections.len()
                    ),
                ));
            }
            while let Some(&(at, index)) = self.waiting.front() {
                if at > now {
                    break;
                }
                self.waiting.pop_front();
                self.send(index, now)?;
            }
            let mut deadline = stalled_at;
            if let Some(&(at, _)) = self.waiting.front() {
                deadline = deadline.min(at);
            }
            let deadline = phases.next(deadline);
            match poll.poll(&mut events, Some(deadline.saturating_duration_since(now))) {
                Ok(()) => {}
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
            for event in &events {
                self.serve(event.token().0)?;
            }
        }
    }

    /// Starts connection `index`'s next round trip at `now`.
    fn send(&mut self, index: usize, now: Instant) -> io::Result<()> {
        let connection = &mut self.connections[index];
        connection.sent = 0;
        connection.received = 0;
        connection.started = Some(now);
        self.flush(index)
    }

    /// Writes what the socket takes of the current message.
    fn flush(&mut self, index: usize) -> io::Result<()> {
        let connection = &mut self.connections[index];
        while connection.started.is_some() && connection.sent < self.message.len() {
            match connection.stream.write(&self.message[connection.sent..]) {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                Ok(written) => connection.sent += written,
                Err(err) if err.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// Connection `index` is ready: writes what is left of its message,
    /// reads its echo until the socket is drained or the whole echo is in,
    /// and then finishes the round trip (and starts the next).
    fn serve(&mut self, index: usize) -> io::Result<()> {
        self.flush(index)?;
        while self.connections[index].started.is_some() {
            let connection = &mut self.connections[index];
            let read = match connection.stream.read(&mut self.scratch) {
                Ok(0) => {
                    return Err(io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "the server closed a connection",
                    ));
                }
                Ok(read) => read,
                Err(err) if err.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            let from = connection.received;
            if from + read > connection.sent {
                return Err(io::Error::new(
                    ErrorKind::InvalidData,
                    "the server sent back more bytes than it was sent",
                ));
            }
            if self.scratch[..read] != self.message[from..from + read] {
                return Err(io::Error::new(
                    ErrorKind::InvalidData,
                    "the server sent back other bytes than it was sent",
                ));
            }
            connection.received += read;
            if connection.received == self.message.len() {
                // The socket is empty (module doc): stop reading here.
                return self.finish(index);
            }
        }
        Ok(())
    }

    /// Records connection `index`'s round trip and, before `end`, starts
    /// its next one.
    fn finish(&mut self, index: usize) -> io::Result<()> {
        let now = Instant::now();
        self.last_progress = now;
        let Some(started) = self.connections[index].started.take() else {
            return Ok(());
        };
        if self.span.contains(started) {
            self.outcome
                .latency
                .record(now.saturating_duration_since(started));
        }
        if self.span.contains(now) {
            self.outcome.finished += 1;
        }
        if now < self.span.end {
            match self.pacer.as_mut().map(|p| p.slot(now)) {
                Some(at) if at > now => self.waiting.push_back((at, index)),
                _ => self.send(index, now)?,
            }
        }
        Ok(())
    }

    /// At the drain deadline: the window's round trips still out count
    /// with their latency so far.
    fn censor(&mut self, now: Instant) {
        let span = self.span;
        for connection in &mut self.connections {
            if let Some(started) = connection.started.take()
                && span.contains(started)
            {
                self.outcome.readings.unfinished += 1;
                self.outcome
                    .latency
                    .record(now.saturating_duration_since(started));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::net::TcpListener;
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

    /// An echo server whose `mangle` turns what it read into what it sends
    /// back.
    fn echo_server(mangle: fn(&mut Vec<u8>)) -> SocketAddr {
        thread_server(move |_: &mut (), read: &[u8], out: &mut Vec<u8>| {
            out.extend_from_slice(read);
            mangle(out);
        })
    }

    #[test]
    fn a_closed_loop_against_a_thread_server_counts_and_records() {
        let address = echo_server(|_| {});
        let outcome = run(address, &plan(4, 4096)).unwrap();
        closed_loop_measured(&outcome);
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

    #[test]
    fn a_paced_run_sends_at_its_rate() {
        let address = echo_server(|_| {});
        let mut paced = plan(4, 64);
        paced.options.rate_per_s = Some(500.0);
        let outcome = run(address, &paced).unwrap();
        // 500/s over a 200 ms window: about 100, far below the closed loop.
        assert!(
            (60..=140).contains(&outcome.finished),
            "{}",
            outcome.finished
        );
    }

    #[test]
    fn a_wrong_echo_fails_the_run() {
        let address = echo_server(|reply| reply[0] ^= 1);
        let err = run(address, &plan(1, 64)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{err}");
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

    #[test]
    fn a_silent_server_times_out() {
        times_out_on_a_silent_server(run);
    }
}
