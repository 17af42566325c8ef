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
//! Invariants (those of the mixed suite's generator):
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

use std::collections::VecDeque;
use std::io::{self, ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::common::measure::Span;
use crate::serve::load::{Outcome, Pacer, Phases, Plan};

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
mod tests {
    use super::*;
    use crate::serve::load::tests::{
        closed_loop_measured, plan, thread_server, times_out_on_a_silent_server,
    };

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

    #[test]
    fn a_silent_server_times_out() {
        times_out_on_a_silent_server(run);
    }
}
