//! The state machine behind a [`File`](super::File): one operation in
//! flight at a time, on a buffer that travels to the pool thread and back.
//!
//! # States
//!
//! - `Idle(buf)`: nothing runs; `buf` may hold bytes a read fetched and the
//!   reader has not taken yet (*unread* bytes).
//! - `Busy(in_flight)`: a closure on the blocking pool owns the buffer and
//!   an `Arc` of the `std` file; its `JoinHandle` gives both back with the
//!   result. `in_flight.kind` says what it is: `Read`, `Write`,
//!   `Seek(requested)` or `Other` (the `&self` methods).
//!
//! # Rules
//!
//! 1. **One operation at a time, in order.** Every entry point first
//!    completes the operation in flight (`poll_done`, which puts the state
//!    back to `Idle`), then starts its own. So writes land in the order they
//!    were made, and a seek, flush, sync or metadata call after a write
//!    sees it. A result nobody is waiting for any more (its future was
//!    dropped) is consumed by whoever completes it next: a read's bytes stay
//!    in the buffer, a write's error is kept (rule 4), anything else is
//!    dropped.
//! 2. **The buffer moves, it is never shared.** `Idle` owns it; starting an
//!    operation moves it into the closure; completing moves it back. A read
//!    fetches at most `min(room, max_buf)` bytes in one call (`room`: the
//!    caller's free space), a write hands over at most `max_buf` bytes.
//! 3. **Unread bytes are accounted for.** The OS's file position is ahead
//!    of the reader's by the unread bytes. A read returns them before
//!    fetching more. An operation that depends on the position drops them
//!    first and moves the OS position back by their count, on the pool
//!    thread, before it runs: a write, a seek (so a seek that fails leaves
//!    the position where the reader was, as `std`'s does), `set_len`,
//!    `try_clone` and `into_std`. `metadata`, `sync_*` and
//!    `set_permissions` keep them.
//! 4. **A write reports success once its bytes are handed over** (as
//!    tokio's and `std`'s buffered writers do). Its error, when it
//!    completes, is kept in `write_error` and returned by the next write,
//!    flush, `sync_all` or `sync_data`, whichever comes first.
//! 5. **A cancelled operation loses its buffer, not the file.** An
//!    operation the runtime's shutdown dropped before it ran comes back as
//!    an error and a fresh empty buffer; the state is `Idle` again.
//! 6. **`&self` methods take turns.** The methods on `&self` (sync, metadata,
//!    `set_len`, ...) may be called from several tasks at once, and a
//!    `JoinHandle` wakes only one waiter. So a `&self` method first takes
//!    the *turn*: it takes this machine out of the `File`'s mutex (tasks
//!    that find it gone wait for it), polls and starts operations on it
//!    with no lock held, and puts it back when done, waking every task
//!    waiting. The `&mut self` paths (the I/O traits) need no turn: the
//!    borrow excludes every `&self` caller.
//! 7. **Only the closure in flight shares the `std` file.** Every pool call
//!    that touches the file goes through `start`, so once the state is
//!    `Idle` the `File` holds the only `Arc` (`into_std` unwraps it).
//!
//! futures-io's `poll_seek` is called again with the same position until it
//! completes, so a seek in flight whose requested position equals the
//! caller's is taken as the caller's own; any other seek in flight was
//! abandoned and is completed first. (An abandoned seek followed by a seek
//! to the very same position is therefore applied once.) tokio's
//! `start_seek`/`poll_complete` pair needs no such guess.
//!
//! All rules are for correctness. There is no lock-free protocol (so no
//! loom model): `Inner` sits behind its `File`'s mutex, which the `&mut
//! self` paths reach without locking (`get_mut`) and the `&self` paths lock
//! only to take the machine out and put it back (no waker, `JoinHandle`
//! or spawn under the lock: `crate::util::locks`). `tests/fs.rs` pins
//! them: rules 1-3 by the interleaved sequences checked against `std` and
//! by the read-ahead test, rule 4 by the writes to `/dev/full`, rule 6 by
//! 64 tasks sharing one `File`, the seek identity by its own test.

use std::fs::{File as StdFile, FileTimes, Metadata, Permissions};
use std::future::Future;
use std::io::{self, IoSlice, Read, Seek, SeekFrom, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use crate::task::JoinHandle;

/// A `File`'s state (behind its mutex).
pub(super) struct Inner {
    state: State,
    /// The error of a write that completed with nobody waiting for it (rule 4).
    write_error: Option<io::Error>,
    /// Where the last completed seek arrived: what tokio's `poll_complete`
    /// returns when no seek is in flight.
    pos: u64,
    /// The most bytes one read or write moves (rule 2).
    pub(super) max_buf: usize,
}

// `Busy` is the state of every file operation in flight: boxing it would
// add an allocation per operation to save bytes in a `File` that spends
// much of its life busy.
#[allow(clippy::large_enum_variant)]
enum State {
    Idle(Buf),
    Busy(InFlight),
}

struct InFlight {
    kind: Kind,
    handle: JoinHandle<(io::Result<Reply>, Buf)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Read,
    Write,
    /// The position asked for.
    Seek(SeekFrom),
    Other,
}

impl Kind {
    /// The operation, as the panic outside a runtime names it.
    fn name(self) -> &'static str {
        match self {
            Kind::Read => "File::poll_read",
            Kind::Write => "File::poll_write",
            Kind::Seek(_) => "File::poll_seek",
            Kind::Other => "File",
        }
    }
}

/// What a closure on the pool does.
pub(super) enum Job {
    Read {
        want: usize,
    },
    Write,
    Seek(SeekFrom),
    SetLen(u64),
    SyncAll,
    SyncData,
    Metadata,
    SetPermissions(Permissions),
    SetTimes(FileTimes),
    TryClone,
    /// Only rule 3's move back (`into_std`).
    Rewind,
}

/// What a closure on the pool gives back besides the buffer.
pub(super) enum Reply {
    Done,
    Pos(u64),
    Metadata(Metadata),
    File(StdFile),
}

impl Job {
    /// Whether the OS position must first move back over unread bytes (rule 3).
    fn rewinds(&self) -> bool {
        matches!(self, Job::SetLen(_) | Job::TryClone | Job::Rewind)
    }

    /// Whether an earlier write's error is this call's to report (rule 4).
    pub(super) fn reports_write_error(&self) -> bool {
        matches!(self, Job::SyncAll | Job::SyncData)
    }

    /// Runs on a pool thread.
    fn run(self, mut file: &StdFile, rewind: u64, buf: &mut Buf) -> io::Result<Reply> {
        // `>=` here (a mutant) adds a seek by 0: equivalent but for a syscall.
        if rewind > 0 {
            // `rewind` is at most one read's size, which fits a slice.
            file.seek(SeekFrom::Current(-(rewind as i64)))?;
        }
        match self {
            Job::Read { want } => buf.read_from(file, want).map(|()| Reply::Done),
            Job::Write => file.write_all(buf.unread()).map(|()| Reply::Done),
            Job::Seek(to) => file.seek(to).map(Reply::Pos),
            Job::SetLen(len) => file.set_len(len).map(|()| Reply::Done),
            Job::SyncAll => file.sync_all().map(|()| Reply::Done),
            Job::SyncData => file.sync_data().map(|()| Reply::Done),
            Job::Metadata => file.metadata().map(Reply::Metadata),
            Job::SetPermissions(perm) => file.set_permissions(perm).map(|()| Reply::Done),
            Job::SetTimes(times) => file.set_times(times).map(|()| Reply::Done),
            Job::TryClone => file.try_clone().map(Reply::File),
            Job::Rewind => Ok(Reply::Done),
        }
    }
}

/// The bytes that travel between a task and a pool thread: the unread part
/// of a read, or the bytes of a write, `bytes[start..end]`.
#[derive(Default)]
pub(super) struct Buf {
    /// Grows to the largest read or write made (at most `max_buf`), so
    /// steady reads do not allocate.
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl Buf {
    fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    fn is_empty(&self) -> bool {
        self.start == self.end
    }

    fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    /// Drops the unread bytes; returns how many there were.
    fn discard(&mut self) -> u64 {
        let unread = (self.end - self.start) as u64;
        self.clear();
        unread
    }

    /// Gives up to `room` unread bytes to `put`; returns how many.
    fn take(&mut self, room: usize, put: impl FnOnce(&[u8])) -> usize {
        let n = room.min(self.end - self.start);
        put(&self.bytes[self.start..self.start + n]);
        self.start += n;
        n
    }

    /// Copies the slices in order, at most `max` bytes in all; returns how
    /// many were copied.
    fn fill_from(&mut self, srcs: &[IoSlice<'_>], max: usize) -> usize {
        self.bytes.clear();
        for src in srcs {
            let room = max - self.bytes.len();
            if room == 0 {
                break;
            }
            self.bytes.extend_from_slice(&src[..src.len().min(room)]);
        }
        self.start = 0;
        self.end = self.bytes.len();
        self.end
    }

    /// One `read` of up to `want` bytes (retried if interrupted by a signal).
    fn read_from(&mut self, mut file: &StdFile, want: usize) -> io::Result<()> {
        // `<=` here (a mutant) resizes to the same length: equivalent.
        if self.bytes.len() < want {
            self.bytes.resize(want, 0);
        }
        self.clear();
        let n = loop {
            match file.read(&mut self.bytes[..want]) {
                // This guard made `false` (a mutant) is out of the tests'
                // reach: a regular file's read is not interrupted, and
                // weft's signal handlers restart syscalls (`SA_RESTART`).
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                result => break result?,
            }
        };
        self.end = n;
        Ok(())
    }
}

impl Inner {
    pub(super) fn new(max_buf: usize) -> Inner {
        Inner {
            state: State::Idle(Buf::default()),
            write_error: None,
            pos: 0,
            max_buf,
        }
    }

    pub(super) fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle(_))
    }

    /// The idle buffer's unread bytes (0 while busy).
    pub(super) fn unread(&self) -> u64 {
        match &self.state {
            State::Idle(buf) => buf.unread().len() as u64,
            State::Busy(_) => 0,
        }
    }

    /// Drops the unread bytes of the idle buffer (the caller has moved the
    /// OS position back over them).
    ///
    /// Its one caller, `try_into_std`, drops the machine right after:
    /// emptying this (a mutant) is equivalent there.
    pub(super) fn discard_unread(&mut self) {
        if let State::Idle(buf) = &mut self.state {
            buf.clear();
        }
    }

    pub(super) fn take_write_error(&mut self) -> Option<io::Error> {
        self.write_error.take()
    }

    /// Moves the idle buffer into a closure that first moves the OS
    /// position back by `rewind` bytes (rule 3) and then runs `job`. Only
    /// while idle.
    fn start(&mut self, file: &Arc<StdFile>, kind: Kind, job: Job, rewind: u64) {
        let State::Idle(buf) = &mut self.state else {
            unreachable!("an operation starts only when none is in flight")
        };
        let mut buf = std::mem::take(buf);
        let file = file.clone();
        let handle = super::super::spawn(kind.name(), move || {
            let result = job.run(&file, rewind, &mut buf);
            if kind == Kind::Write {
                buf.clear(); // written, or failed: not to be written again
            }
            (result, buf)
        });
        self.state = State::Busy(InFlight { kind, handle });
    }

    /// Completes the operation in flight (rule 1): `None` if there was
    /// none. A write's error goes to `write_error` (rule 4); a seek's
    /// position to `pos`.
    fn poll_done(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Kind, io::Result<Reply>)>> {
        let State::Busy(in_flight) = &mut self.state else {
            return Poll::Ready(None);
        };
        let joined = ready!(Pin::new(&mut in_flight.handle).poll(cx));
        let kind = in_flight.kind;
        // The handle is spent: idle from here on, also if `not_run` resumes
        // a panic.
        self.state = State::Idle(Buf::default());
        let (result, buf) = match joined {
            Ok(done) => done,
            Err(error) => (
                Err(super::super::not_run(error, kind.name())),
                Buf::default(),
            ), // rule 5
        };
        self.state = State::Idle(buf);
        match (kind, result) {
            (Kind::Write, Err(error)) => {
                self.write_error = Some(error);
                Poll::Ready(Some((kind, Ok(Reply::Done))))
            }
            (Kind::Seek(_), Ok(Reply::Pos(pos))) => {
                self.pos = pos;
                Poll::Ready(Some((kind, Ok(Reply::Pos(pos)))))
            }
            (kind, result) => Poll::Ready(Some((kind, result))),
        }
    }

    /// Completes whatever is in flight.
    pub(super) fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        ready!(self.poll_done(cx));
        Poll::Ready(())
    }

    /// `AsyncRead`: up to `room` bytes given to `put`; `Ok(0)` at the end.
    pub(super) fn poll_read(
        &mut self,
        file: &Arc<StdFile>,
        cx: &mut Context<'_>,
        room: usize,
        put: impl FnOnce(&[u8]),
    ) -> Poll<io::Result<usize>> {
        if room == 0 {
            return Poll::Ready(Ok(0));
        }
        loop {
            match &mut self.state {
                State::Idle(buf) if !buf.is_empty() => {
                    return Poll::Ready(Ok(buf.take(room, put)));
                }
                State::Idle(_) => {
                    let want = room.min(self.max_buf);
                    self.start(file, Kind::Read, Job::Read { want }, 0);
                }
                State::Busy(_) => match ready!(self.poll_done(cx)) {
                    Some((Kind::Read, Err(error))) => return Poll::Ready(Err(error)),
                    Some((Kind::Read, Ok(_))) if self.unread() == 0 => {
                        return Poll::Ready(Ok(0)); // the end of the file
                    }
                    _ => {}
                },
            }
        }
    }

    /// `AsyncWrite::poll_write`: hands up to `max_buf` bytes to the pool.
    pub(super) fn poll_write(
        &mut self,
        file: &Arc<StdFile>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(file, cx, &[IoSlice::new(src)])
    }

    /// `AsyncWrite::poll_write_vectored`: as `poll_write`, with the slices'
    /// bytes copied in order into one pool write (at most `max_buf` of
    /// them), so every slice is written, not only the first (tokio's).
    pub(super) fn poll_write_vectored(
        &mut self,
        file: &Arc<StdFile>,
        cx: &mut Context<'_>,
        srcs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        loop {
            if let Some(error) = self.write_error.take() {
                return Poll::Ready(Err(error));
            }
            match &mut self.state {
                State::Idle(_) if srcs.iter().all(|src| src.is_empty()) => {
                    return Poll::Ready(Ok(0));
                }
                State::Idle(buf) => {
                    // Rule 3's move back is the closure's, before the write.
                    let rewind = buf.discard();
                    let n = buf.fill_from(srcs, self.max_buf);
                    self.start(file, Kind::Write, Job::Write, rewind);
                    return Poll::Ready(Ok(n));
                }
                State::Busy(_) => {
                    ready!(self.poll_done(cx));
                }
            }
        }
    }

    /// `AsyncWrite::poll_flush`: waits for the write in flight; gives the
    /// error of a write not yet reported.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_idle(cx));
        Poll::Ready(self.write_error.take().map_or(Ok(()), Err))
    }

    /// tokio's `start_seek`: refused while an operation is in flight (call
    /// `poll_complete` first, as tokio's `seek` does).
    pub(super) fn start_seek(&mut self, file: &Arc<StdFile>, pos: SeekFrom) -> io::Result<()> {
        let State::Idle(buf) = &mut self.state else {
            return Err(io::Error::other(
                "another file operation is in flight: call poll_complete before start_seek",
            ));
        };
        let rewind = buf.discard();
        self.start(file, Kind::Seek(pos), Job::Seek(pos), rewind);
        Ok(())
    }

    /// tokio's `poll_complete`: the position of the seek in flight once it
    /// completes (what ran before it completed first); the last seek's
    /// position if none is in flight.
    #[cfg(feature = "tokio-io")]
    pub(super) fn poll_complete(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        loop {
            match ready!(self.poll_done(cx)) {
                None => return Poll::Ready(Ok(self.pos)),
                Some((Kind::Seek(_), result)) => return Poll::Ready(result.map(|_| self.pos)),
                Some(_) => {}
            }
        }
    }

    /// futures-io's `poll_seek` (see the module doc for how a call finds
    /// its own seek).
    pub(super) fn poll_seek(
        &mut self,
        file: &Arc<StdFile>,
        cx: &mut Context<'_>,
        pos: SeekFrom,
    ) -> Poll<io::Result<u64>> {
        loop {
            let ours = match &self.state {
                State::Idle(_) => {
                    self.start_seek(file, pos)?;
                    true
                }
                State::Busy(in_flight) => in_flight.kind == Kind::Seek(pos),
            };
            if let (Some((Kind::Seek(_), result)), true) = (ready!(self.poll_done(cx)), ours) {
                return Poll::Ready(result.map(|_| self.pos));
            }
        }
    }

    /// Starts a `&self` method's job (the caller holds the turn and has
    /// completed what was in flight).
    pub(super) fn start_other(&mut self, file: &Arc<StdFile>, job: Job) {
        let rewind = match &mut self.state {
            State::Idle(buf) if job.rewinds() => buf.discard(),
            _ => 0,
        };
        self.start(file, Kind::Other, job, rewind);
    }

    /// The result of the job `start_other` started.
    pub(super) fn poll_other(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Reply>> {
        match ready!(self.poll_done(cx)) {
            Some((Kind::Other, result)) => Poll::Ready(result),
            _ => unreachable!("only the turn holder starts operations while it holds the turn"),
        }
    }
}
