//! The floor: the echo and HTTP suites' requests answered with no async
//! runtime at all, so that the server's cost per request (`echo::cost`)
//! can be read against what this machine needs for the same work, not
//! only against the peers. Like the mixed suite's oracle it is never a
//! peer: no ratio names it, no target holds it, and the suites list it last
//! (`--no-floor` leaves it out).
//!
//! The cheapest epoll design for a few cores: one thread per worker (the
//! runtimes' worker count), each with its own epoll set, level-triggered
//! (`EPOLLIN`, `EPOLLOUT` only while a response waits for room), taking up
//! to [`EVENTS`] events per `epoll_wait`. Worker 0 also holds the
//! listener: it accepts every connection (non-blocking, `TCP_NODELAY`, as
//! the suites' servers set) and deals them round-robin, each into the epoll
//! set of the worker that will own it and, before that, into that worker's
//! inbox (an `mpsc` channel, read only when an event names a connection
//! the worker does not know yet). So a connection belongs to one thread
//! from its accept to its close: no lock, no futex and no eventfd while it
//! is served. Per readiness event: one `recv` of up to [`BUFFER_BYTES`],
//! the answers to every complete request in it ([`Protocol`]), and one
//! `send` of all of them; bytes of an incomplete request wait for the next
//! read. An eventfd written once by [`Floor::stop`] ends the workers.
//!
//! Invariant: a connection's socket is closed exactly once, by the one
//! owner it has at a time (the accepting worker's inbox, then its worker's
//! table, or the inbox's drop when the worker is gone), and the epoll fds
//! outlive every worker that may touch them.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::{self, JoinHandle};

use crate::common::runtimes::net::LOOPBACK;

/// The floor's name in the runs, tables and JSON: neither weft nor a peer.
pub const FLOOR: &str = "floor";

/// Most events one `epoll_wait` returns.
pub const EVENTS: usize = 256;

/// The most one read takes (a whole request of either suite fits).
pub const BUFFER_BYTES: usize = 64 * 1024;

/// The most bytes of incomplete requests a connection may hold before the
/// floor takes it for broken and closes it.
const PENDING_LIMIT: usize = 64 * 1024;

/// Event data of the stop eventfd and of the listener (a connection's is
/// its fd, never negative).
const STOP: u64 = u64::MAX;
const LISTENER: u64 = u64::MAX - 1;

/// What the floor answers: each worker has its own, made by `Default`.
pub trait Protocol: Default + Send + 'static {
    /// Called once per `epoll_wait` that returned events, before they are
    /// handled (the HTTP answer's date follows the clock here).
    fn tick(&mut self) {}

    /// Appends to `out` the answers to the complete requests at the start
    /// of `input`.
    fn answer(&mut self, input: &[u8], out: &mut Vec<u8>) -> Answer;
}

/// What [`Protocol::answer`] made of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// Bytes of `input` the answered requests took (the rest is kept for
    /// the next read).
    pub consumed: usize,
    /// Whether the connection ends once the answers are sent.
    pub close: bool,
}

/// The echo suite's protocol: every byte read is written back.
#[derive(Debug, Default)]
pub struct Echo;

impl Protocol for Echo {
    fn answer(&mut self, input: &[u8], out: &mut Vec<u8>) -> Answer {
        out.extend_from_slice(input);
        Answer {
            consumed: input.len(),
            close: false,
        }
    }
}

/// A running floor server; [`Floor::stop`] ends it.
pub struct Floor {
    address: SocketAddr,
    /// Written once to end every worker (level-triggered in every set).
    stop: OwnedFd,
    /// Every worker's epoll set, closed only after every worker ended.
    _epolls: Arc<[OwnedFd]>,
    workers: Vec<JoinHandle<io::Result<()>>>,
}

impl Floor {
    /// Binds a listener on loopback and starts `workers` threads (at least
    /// one) answering with `P`.
    pub fn start<P: Protocol>(workers: usize) -> io::Result<Floor> {
        let workers = workers.max(1);
        let listener = TcpListener::bind(LOOPBACK)?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        // SAFETY: `eventfd` takes no pointer; a non-negative result is a
        // new fd that nothing else owns, so `OwnedFd` may take it.
        let stop = unsafe { owned(libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK))? };
        let epolls: Arc<[OwnedFd]> = (0..workers)
            // SAFETY: as for the eventfd: a new fd, owned by nothing else.
            .map(|_| unsafe { owned(libc::epoll_create1(libc::EPOLL_CLOEXEC)) })
            .collect::<io::Result<Vec<_>>>()?
            .into();
        for epoll in epolls.iter() {
            control(
                epoll.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                stop.as_raw_fd(),
                libc::EPOLLIN as u32,
                STOP,
            )?;
        }
        control(
            epolls[0].as_raw_fd(),
            libc::EPOLL_CTL_ADD,
            listener.as_raw_fd(),
            libc::EPOLLIN as u32,
            LISTENER,
        )?;
        let (inboxes, receivers): (Vec<Sender<TcpStream>>, Vec<Receiver<TcpStream>>) =
            (0..workers).map(|_| mpsc::channel()).unzip();
        let mut floor = Floor {
            address,
            stop,
            _epolls: Arc::clone(&epolls),
            workers: Vec::new(),
        };
        let mut dealer = Some(Dealer {
            listener,
            inboxes,
            next: 0,
        });
        for (index, inbox) in receivers.into_iter().enumerate() {
            let worker = Worker::<P> {
                index,
                epolls: Arc::clone(&epolls),
                dealer: dealer.take(),
                inbox,
                connections: Vec::new(),
                protocol: P::default(),
            };
            let thread = thread::Builder::new()
                .name(format!("floor-{index}"))
                .spawn(move || worker.run());
            match thread {
                Ok(thread) => floor.workers.push(thread),
                // The workers started so far end as `floor` drops.
                Err(err) => return Err(err),
            }
        }
        Ok(floor)
    }

    /// Where it listens.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Ends every worker, which closes its connections, and waits for
    /// them; the first worker's error, if one ended on one.
    pub fn stop(mut self) -> io::Result<()> {
        self.end()
    }

    /// Signals the stop and joins the workers.
    fn end(&mut self) -> io::Result<()> {
        let one = 1u64.to_ne_bytes();
        // SAFETY: `one` is 8 readable bytes that outlive the call; the fd
        // is this floor's open eventfd.
        let wrote = unsafe { libc::write(self.stop.as_raw_fd(), one.as_ptr().cast(), one.len()) };
        if wrote < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut result = Ok(());
        for worker in self.workers.drain(..) {
            let ended = worker
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a floor worker panicked")));
            if result.is_ok() {
                result = ended;
            }
        }
        result
    }
}

impl Drop for Floor {
    /// A floor dropped unstopped (a failed start, a panic) still ends its
    /// workers.
    fn drop(&mut self) {
        if !self.workers.is_empty() {
            let _ = self.end();
        }
    }
}

/// `fd` as an owned fd, or the error a negative one stands for.
///
/// # Safety
///
/// A non-negative `fd` must be open and owned by nothing else.
unsafe fn owned(fd: RawFd) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the caller guarantees an open fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `epoll_ctl(epoll, op, fd)` with `events` and `data`.
fn control(epoll: RawFd, op: libc::c_int, fd: RawFd, events: u32, data: u64) -> io::Result<()> {
    let mut event = libc::epoll_event { events, u64: data };
    // SAFETY: `event` is a valid `epoll_event` that outlives the call; the
    // kernel checks both fds (a closed one is `EBADF`, not undefined).
    let rc = unsafe { libc::epoll_ctl(epoll, op, fd, &mut event) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Worker 0's listener and the inboxes it deals connections to.
struct Dealer {
    listener: TcpListener,
    inboxes: Vec<Sender<TcpStream>>,
    next: usize,
}

impl Dealer {
    /// Accepts every connection waiting and deals each to the next worker
    /// in turn: its inbox first, then its epoll set, so that the worker
    /// finds it in its inbox whenever an event names it.
    fn accept(&mut self, epolls: &[OwnedFd]) -> io::Result<()> {
        loop {
            let stream = match self.listener.accept() {
                Ok((stream, _)) => stream,
                Err(err) if err.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                // Aborted before it was accepted: not the listener's fault.
                Err(err) if err.kind() == ErrorKind::ConnectionAborted => continue,
                Err(err) => return Err(err),
            };
            stream.set_nonblocking(true)?;
            stream.set_nodelay(true)?;
            let fd = stream.as_raw_fd();
            let worker = self.next % self.inboxes.len();
            self.next += 1;
            // A worker already gone (stopping) drops it, which closes it.
            if self.inboxes[worker].send(stream).is_ok() {
                let data = u64::try_from(fd).map_err(io::Error::other)?;
                control(
                    epolls[worker].as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    fd,
                    libc::EPOLLIN as u32,
                    data,
                )?;
            }
        }
    }
}

/// One connection of a worker.
struct Connection {
    stream: TcpStream,
    /// Bytes of requests not complete yet.
    pending: Vec<u8>,
    /// Answers not sent yet (the socket had no room).
    out: Vec<u8>,
    /// Whether the set waits for room (`EPOLLOUT`) for it.
    waiting_for_room: bool,
    /// Whether it ends once `out` is sent.
    closing: bool,
}

/// What a connection's event left it as.
enum After {
    Open,
    Closed,
}

/// One worker thread: its epoll set, its connections by fd, its protocol.
struct Worker<P> {
    index: usize,
    epolls: Arc<[OwnedFd]>,
    dealer: Option<Dealer>,
    inbox: Receiver<TcpStream>,
    connections: Vec<Option<Connection>>,
    protocol: P,
}

impl<P: Protocol> Worker<P> {
    /// Serves until the stop eventfd is readable; its connections close
    /// as it ends.
    fn run(mut self) -> io::Result<()> {
        let epoll = self.epolls[self.index].as_raw_fd();
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        let mut buffer = vec![0u8; BUFFER_BYTES];
        let capacity = libc::c_int::try_from(EVENTS).unwrap_or(libc::c_int::MAX);
        loop {
            // SAFETY: `events` holds `capacity` writable `epoll_event`s and
            // outlives the call; `epoll` is this worker's set, open until
            // every worker ended (`Floor::_epolls`).
            let ready = unsafe { libc::epoll_wait(epoll, events.as_mut_ptr(), capacity, -1) };
            let ready = match usize::try_from(ready) {
                Ok(ready) => ready,
                Err(_) => {
                    let err = io::Error::last_os_error();
                    if err.kind() == ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(err);
                }
            };
            self.protocol.tick();
            for event in &events[..ready] {
                let (flags, data) = (event.events, event.u64);
                match data {
                    STOP => return Ok(()),
                    LISTENER => {
                        if let Some(dealer) = &mut self.dealer {
                            dealer.accept(&self.epolls)?;
                        }
                    }
                    fd => self.serve(fd, flags, &mut buffer)?,
                }
            }
        }
    }

    /// Handles one event of the connection on `fd`.
    fn serve(&mut self, fd: u64, flags: u32, buffer: &mut [u8]) -> io::Result<()> {
        let slot = usize::try_from(fd).map_err(io::Error::other)?;
        if self.connections.get(slot).is_none_or(Option::is_none) {
            self.take_inbox();
        }
        let Some(Some(connection)) = self.connections.get_mut(slot) else {
            return Ok(());
        };
        let after = connection.on_event(flags, buffer, &mut self.protocol);
        let epoll = self.epolls[self.index].as_raw_fd();
        match after {
            Ok(After::Open) => {
                let wait = !connection.out.is_empty();
                if wait != connection.waiting_for_room {
                    connection.waiting_for_room = wait;
                    let events = libc::EPOLLIN | if wait { libc::EPOLLOUT } else { 0 };
                    control(
                        epoll,
                        libc::EPOLL_CTL_MOD,
                        connection.stream.as_raw_fd(),
                        events as u32,
                        fd,
                    )?;
                }
            }
            // A reset or any other error of one connection ends it only.
            Ok(After::Closed) | Err(_) => self.connections[slot] = None,
        }
        Ok(())
    }

    /// Moves the connections dealt to this worker into its table.
    fn take_inbox(&mut self) {
        for stream in self.inbox.try_iter() {
            let Ok(slot) = usize::try_from(stream.as_raw_fd()) else {
                continue;
            };
            if self.connections.len() <= slot {
                self.connections.resize_with(slot + 1, || None);
            }
            self.connections[slot] = Some(Connection {
                stream,
                pending: Vec::new(),
                out: Vec::new(),
                waiting_for_room: false,
                closing: false,
            });
        }
    }
}

impl Connection {
    /// One read if it is readable (and one write of what it answered), a
    /// write of what waits if it has room.
    fn on_event<P: Protocol>(
        &mut self,
        flags: u32,
        buffer: &mut [u8],
        protocol: &mut P,
    ) -> io::Result<After> {
        let readable = (libc::EPOLLIN | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        if flags & readable != 0 && !self.closing {
            let read = match self.stream.read(buffer) {
                Ok(0) => return Ok(After::Closed),
                Ok(read) => read,
                Err(err)
                    if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) =>
                {
                    return Ok(After::Open);
                }
                Err(err) => return Err(err),
            };
            let answer = if self.pending.is_empty() {
                let answer = protocol.answer(&buffer[..read], &mut self.out);
                self.pending
                    .extend_from_slice(&buffer[answer.consumed..read]);
                answer
            } else {
                self.pending.extend_from_slice(&buffer[..read]);
                let answer = protocol.answer(&self.pending, &mut self.out);
                self.pending.drain(..answer.consumed);
                answer
            };
            self.closing = answer.close;
            if self.pending.len() > PENDING_LIMIT {
                return Ok(After::Closed);
            }
        }
        if !self.out.is_empty() {
            match self.stream.write(&self.out) {
                Ok(all) if all == self.out.len() => self.out.clear(),
                Ok(part) => {
                    self.out.drain(..part);
                }
                Err(err)
                    if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                Err(err) => return Err(err),
            }
        }
        if self.closing && self.out.is_empty() {
            return Ok(After::Closed);
        }
        Ok(After::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_floor_echoes_over_many_connections_and_stops() {
        let floor = Floor::start::<Echo>(2).unwrap();
        let mut streams: Vec<TcpStream> = (0..5)
            .map(|_| TcpStream::connect(floor.address()).unwrap())
            .collect();
        for round in 0..3u8 {
            for (i, stream) in streams.iter_mut().enumerate() {
                let message = [round, i as u8, 7, 9];
                stream.write_all(&message).unwrap();
                let mut back = [0u8; 4];
                stream.read_exact(&mut back).unwrap();
                assert_eq!(back, message);
            }
        }
        // One connection ends early; the rest stay open across the stop.
        drop(streams.pop());
        floor.stop().unwrap();
        let mut rest = [0u8; 1];
        assert_eq!(streams[0].read(&mut rest).unwrap(), 0, "closed at the stop");
    }
}
