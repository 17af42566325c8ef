//! One registered I/O source's readiness and the tasks waiting on it.
//!
//! # The readiness word
//!
//! `readiness` packs the readiness bits the reactor has seen (readable,
//! writable, read closed, write closed, error, priority), a 16-bit *tick* counting
//! the reactor's deliveries to this source, and a shutdown bit. The poller
//! sets bits with one read-modify-write that also bumps the tick; a task
//! clears a bit after its operation returned `WouldBlock`, and only if the
//! tick is still the one it saw when it found the bit set
//! (`clear_readiness`, a compare-exchange). Sources are registered
//! edge-triggered, so the reactor reports a new readiness once: a clear that
//! ignored the tick could erase a delivery that arrived between the
//! `WouldBlock` and the clear, and the task would wait for an edge that
//! already came.
//!
//! # No lost wake-up
//!
//! A task that finds its direction not ready stores its waker under
//! `waiters`' mutex and, still holding it, reads the word again. The poller
//! sets the bits first and takes the mutex after to collect the wakers. If
//! the poller's lock comes after the task's, it finds the waker; if before,
//! its read-modify-write happened before its unlock, which happened before
//! the task's lock, so the task's second read sees the bits. The mutex
//! gives the order: nothing rests on SeqCst (loom models it as AcqRel).
//! `loom_tests.rs` checks both orders and fails without the second read.
//!
//! # Waiters
//!
//! One waker slot per direction for the `poll_*` interface (as tokio's
//! `poll_read_ready`: the last task to poll is the one woken), plus a list
//! for the `readiness` futures, so any number of tasks may wait on one
//! shared socket (`UdpSocket::recv` from several tasks). A `try_*` call
//! stores no waker (`ready_now`): it would take the slot's task's place.
//! Wakers are cloned
//! before the mutex is taken, and taken under it to be woken or dropped
//! after it is released: a waker is the program's code (`crate::util::locks`).
//!
//! # Orderings
//!
//! `readiness` publishes nothing but its own bits (the data a ready socket
//! has is the kernel's), and the wake-up order rests on the waiter mutex
//! and on every change of the word being a read-modify-write. So its
//! Acquire/Release orderings are stronger than the protocol needs:
//! `scripts/orderings.sh` weakens each alone (every Acquire, Release and
//! AcqRel here) and every loom model still passes
//! (docs/experiments.md#memory-ordering-survey).
//! They are kept as the conventional pairing for a word other threads
//! read (it costs nothing on x86); the models check what matters, the
//! re-read under the waiter lock and the tick.

use std::task::{Context, Poll, Waker};

use crate::util::locks::Mutex;
use crate::util::loom::sync::atomic::{AtomicU64, Ordering};

/// Readiness bits. (`READABLE` is written `1`, not `1 << 0`: the mutation
/// run turned `<<` into `>>` there, which changes nothing.)
pub(crate) const READABLE: u64 = 1;
pub(crate) const WRITABLE: u64 = 1 << 1;
pub(crate) const READ_CLOSED: u64 = 1 << 2;
// `WRITE_CLOSED` is belt and braces on Linux: epoll reports a closed
// socket as writable too, so a writer is woken and its syscall returns the
// error even without it (so no test tells the bit set to 0 or dropped
// from `Direction::Write`'s mask); kept for pollers that report a hang-up
// alone. `ERROR` is not: a connected UDP socket's refused datagram (an
// ICMP "unreachable") comes as `EPOLLERR` alone, and without the bit its
// reader is never woken (correctness; pinned by `net.rs`'s
// `a_connected_udp_socket_reports_a_refused_datagram_then_waits_again`).
pub(crate) const WRITE_CLOSED: u64 = 1 << 3;
pub(crate) const ERROR: u64 = 1 << 4;
/// Urgent (out-of-band) data: `EPOLLPRI`, reported only for a source
/// registered with mio's `PRIORITY` interest (an `AsyncFd` that asks).
pub(crate) const PRIORITY: u64 = 1 << 5;
/// The bits no `WouldBlock` or guard clears: once the peer closed, it
/// stays closed.
const CLOSED: u64 = READ_CLOSED | WRITE_CLOSED;
// The bits and fields of the word are disjoint, so every `|` that joins
// them (here, in `Direction::mask`, in `set_readiness`) equals `^`: those
// mutants are equivalent.
const READY_MASK: u64 = READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED | ERROR | PRIORITY;

const TICK_SHIFT: u32 = 16;
const TICK_MASK: u64 = 0xFFFF << TICK_SHIFT;
/// The runtime that owns the reactor shut down: every operation fails.
const SHUTDOWN: u64 = 1 << 63;

/// Which way a task waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    /// The bits that let an operation in this direction make progress (an
    /// error wakes both: the retried syscall returns it).
    pub(crate) fn mask(self) -> u64 {
        match self {
            Direction::Read => READABLE | READ_CLOSED | ERROR,
            Direction::Write => WRITABLE | WRITE_CLOSED | ERROR,
        }
    }
}

/// The readiness bits a waiter waits for: any one of them makes it
/// ready. A direction's ([`Direction::mask`]), or the set an `AsyncFd` or
/// a socket's `ready(Interest)` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wants(pub(crate) u64);

impl From<Direction> for Wants {
    fn from(direction: Direction) -> Wants {
        Wants(direction.mask())
    }
}

impl Wants {
    /// The bits a `WouldBlock` while waiting for these clears: never a
    /// closed bit (once the peer closed, it stays closed), but `ERROR`
    /// too, as tokio does. A socket's pending error is returned (and
    /// cleared) by the next syscall on it, so a `WouldBlock` means none is
    /// pending any more; a new one is a new edge. Kept set, it made every
    /// later wait ready at once: a UDP socket that once got a refused
    /// datagram spun inside one poll at its next `recv` (`net.rs`,
    /// `a_connected_udp_socket_reports_a_refused_datagram_then_waits_again`).
    fn clear_mask(self) -> u64 {
        self.0 & !CLOSED
    }
}

/// What a task saw when it found what it waits for ready: the tick to
/// hand back to `clear_readiness`, and which of the bits it waited for
/// were set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadyEvent {
    tick: u16,
    ready: u64,
}

impl ReadyEvent {
    /// The readiness bits seen, among those waited for.
    pub(crate) fn ready(self) -> u64 {
        self.ready
    }
}

/// The reactor is gone: the error every operation on a source of a shut
/// down runtime returns (`runtime::is_rt_shutdown_err` tells it).
pub(crate) fn shutdown_error() -> std::io::Error {
    shutdown_error_saying(
        "the weft runtime that registered this I/O source has shut down: create the socket \
         again inside a running runtime",
    )
}

/// The runtime's shutdown stopped an operation: an error that
/// `is_rt_shutdown_err` recognises, saying `message`.
pub(crate) fn shutdown_error_saying(message: &'static str) -> std::io::Error {
    std::io::Error::other(RuntimeShutDown(message))
}

/// The inner error of [`shutdown_error`]: a type of its own, so that
/// `is_rt_shutdown_err` recognises it whatever the message says.
#[derive(Debug)]
pub(crate) struct RuntimeShutDown(&'static str);

impl std::fmt::Display for RuntimeShutDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for RuntimeShutDown {}

struct Waiter {
    id: u64,
    wants: Wants,
    waker: Waker,
}

#[derive(Default)]
struct Waiters {
    reader: Option<Waker>,
    writer: Option<Waker>,
    list: Vec<Waiter>,
    next_id: u64,
}

impl Waiters {
    fn take_ready(&mut self, ready: u64, out: &mut Vec<Waker>) {
        if ready & Direction::Read.mask() != 0 {
            out.extend(self.reader.take());
        }
        if ready & Direction::Write.mask() != 0 {
            out.extend(self.writer.take());
        }
        let mut i = 0;
        while i < self.list.len() {
            if ready & self.list[i].wants.0 != 0 {
                out.push(self.list.swap_remove(i).waker);
            } else {
                i += 1;
            }
        }
    }
}

/// A registered source's shared state: the reactor writes readiness, tasks
/// read and clear it.
pub(crate) struct ScheduledIo {
    readiness: AtomicU64,
    waiters: Mutex<Waiters>,
}

fn ready_event(word: u64, wants: Wants) -> Option<ReadyEvent> {
    (word & wants.0 != 0).then_some(ReadyEvent {
        tick: ((word & TICK_MASK) >> TICK_SHIFT) as u16,
        ready: word & wants.0,
    })
}

impl ScheduledIo {
    pub(crate) fn new() -> ScheduledIo {
        ScheduledIo {
            readiness: AtomicU64::new(0),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    /// The reactor saw `ready` for this source: records it (bumping the
    /// tick) and moves the wakers it satisfies into `out`.
    pub(crate) fn set_readiness(&self, ready: u64, out: &mut Vec<Waker>) {
        let ready = ready & READY_MASK;
        let mut current = self.readiness.load(Ordering::Relaxed);
        loop {
            let tick = (current & TICK_MASK).wrapping_add(1 << TICK_SHIFT) & TICK_MASK;
            let next = (current & !TICK_MASK) | tick | ready;
            match self.readiness.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        // After the bits are set: see "No lost wake-up" in the module doc.
        self.waiters.lock().unwrap().take_ready(ready, out);
    }

    /// Marks `ready` without a delivery (a socket whose state is known at
    /// its creation: an accepted stream is writable and usually holds the
    /// peer's first bytes, both ends of a fresh pair are writable). A wrong
    /// guess costs one `WouldBlock`, which clears it as usual. The tick is
    /// left alone, so no clear is told a delivery came; nothing is done
    /// after shutdown. One read-modify-write of the word, as the poller's
    /// own: no new ordering argument (it only adds bits, as a delivery
    /// does, and wakes nobody: it is called before anyone can wait).
    pub(crate) fn assume_ready(&self, ready: u64) {
        let _ = self
            .readiness
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |current| {
                (current & SHUTDOWN == 0).then_some(current | (ready & READY_MASK))
            });
    }

    /// Shutdown: every operation fails from now on; every waiter is moved
    /// into `out` so it sees that.
    pub(crate) fn shut_down(&self, out: &mut Vec<Waker>) {
        self.readiness.fetch_or(SHUTDOWN, Ordering::AcqRel);
        self.waiters.lock().unwrap().take_ready(READY_MASK, out);
    }

    /// How many `readiness` futures are listed as waiting.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn listed_waiters(&self) -> usize {
        self.waiters.lock().unwrap().list.len()
    }

    /// Moves every waiter's waker into `out` (the source is being
    /// deregistered: nobody will deliver to it again).
    pub(crate) fn take_waiters(&self, out: &mut Vec<Waker>) {
        let mut waiters = self.waiters.lock().unwrap();
        out.extend(waiters.reader.take());
        out.extend(waiters.writer.take());
        out.extend(waiters.list.drain(..).map(|waiter| waiter.waker));
    }

    /// Clears the readiness of what was waited for (a direction, or any
    /// set of bits but the closed ones) after its operation returned
    /// `WouldBlock`, unless the reactor delivered again since `event`.
    pub(crate) fn clear_readiness(&self, event: ReadyEvent, wants: impl Into<Wants>) {
        let clear = wants.into().clear_mask();
        let mut current = self.readiness.load(Ordering::Acquire);
        loop {
            let tick = ((current & TICK_MASK) >> TICK_SHIFT) as u16;
            if tick != event.tick {
                return;
            }
            let next = current & !clear;
            match self.readiness.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Whether what is waited for is ready, storing no waker (`try_io`: a
    /// caller that does not wait must not take the place of one that does
    /// in the direction's slot). `None`: not ready. After shutdown a
    /// readiness seen before it still counts (tokio's rule: data already
    /// known to be there can be read without the reactor); with none, the
    /// shutdown error.
    pub(crate) fn ready_now(&self, wants: impl Into<Wants>) -> Option<std::io::Result<ReadyEvent>> {
        let word = self.readiness.load(Ordering::Acquire);
        ready_event(word, wants.into())
            .map(Ok)
            .or_else(|| (word & SHUTDOWN != 0).then(|| Err(shutdown_error())))
    }

    /// Whether the direction is ready; if not, `cx`'s waker is stored in the
    /// direction's slot and woken by the next delivery for it.
    ///
    /// The waker is cloned before the waiter lock and the one it replaces
    /// dropped after it: both are the program's code (`crate::util::locks`). No
    /// `will_wake` test spares the clone: a task waits again after a
    /// delivery took its waker out of the slot, so the slot is empty and a
    /// clone is needed anyway (one lock, one clone, as before); a task
    /// polled again with no delivery between pays a clone and a drop.
    pub(crate) fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<std::io::Result<ReadyEvent>> {
        let wants = Wants::from(direction);
        if let Some(ready) = verdict(self.readiness.load(Ordering::Acquire), wants) {
            return Poll::Ready(ready);
        }
        crate::util::locks::user_code("a waker's clone (readiness)");
        let waker = cx.waker().clone();
        let (word, replaced) = {
            let mut waiters = self.waiters.lock().unwrap();
            let slot = match direction {
                Direction::Read => &mut waiters.reader,
                Direction::Write => &mut waiters.writer,
            };
            let replaced = slot.replace(waker);
            // Under the lock: see "No lost wake-up" in the module doc.
            (self.readiness.load(Ordering::Acquire), replaced)
        };
        crate::util::locks::user_code("a waker's drop (readiness)");
        drop(replaced);
        poll_of(verdict(word, wants))
    }

    /// `poll_ready` for the waiter `id` of the list (0: not yet listed; the
    /// new id is stored there).
    ///
    /// A waiter polled again while listed with the waker it listed (the
    /// common re-poll) takes the lock once and clones nothing. Otherwise
    /// the waker is cloned before the lock and the one it replaces dropped
    /// after it (`crate::util::locks`); a listed waiter with a new waker, or one a
    /// delivery took off the list, takes the lock twice.
    pub(crate) fn poll_ready_listed(
        &self,
        cx: &mut Context<'_>,
        wants: impl Into<Wants>,
        id: &mut u64,
    ) -> Poll<std::io::Result<ReadyEvent>> {
        let wants = wants.into();
        if let Some(ready) = verdict(self.readiness.load(Ordering::Acquire), wants) {
            return Poll::Ready(ready);
        }
        if *id != 0 {
            let waiters = self.waiters.lock().unwrap();
            let listed =
                (waiters.list.iter()).any(|w| w.id == *id && w.waker.will_wake(cx.waker()));
            if listed {
                // Under the lock: see "No lost wake-up" in the module doc.
                let word = self.readiness.load(Ordering::Acquire);
                drop(waiters);
                return poll_of(verdict(word, wants));
            }
        }
        crate::util::locks::user_code("a waker's clone (readiness, listed)");
        let waker = cx.waker().clone();
        let (word, replaced) = {
            let mut waiters = self.waiters.lock().unwrap();
            let listed = waiters.list.iter_mut().find(|w| w.id == *id && *id != 0);
            let replaced = match listed {
                Some(waiter) => Some(std::mem::replace(&mut waiter.waker, waker)),
                None => {
                    waiters.next_id += 1;
                    *id = waiters.next_id;
                    waiters.list.push(Waiter {
                        id: *id,
                        wants,
                        waker,
                    });
                    None
                }
            };
            // Under the lock: see "No lost wake-up" in the module doc.
            (self.readiness.load(Ordering::Acquire), replaced)
        };
        crate::util::locks::user_code("a waker's drop (readiness, listed)");
        drop(replaced);
        poll_of(verdict(word, wants))
    }

    /// Removes the listed waiter `id` (a readiness future dropped before
    /// it completed).
    pub(crate) fn forget_waiter(&self, id: u64) {
        if id == 0 {
            return;
        }
        let waker = {
            let mut waiters = self.waiters.lock().unwrap();
            let at = waiters.list.iter().position(|w| w.id == id);
            at.map(|at| waiters.list.swap_remove(at).waker)
        };
        crate::util::locks::user_code("a waker's drop (readiness, forgotten)");
        drop(waker);
    }
}

/// What the readiness word says to a task waiting for `wants`: ready (or
/// failed, after shutdown), or `None`: wait.
fn verdict(word: u64, wants: Wants) -> Option<std::io::Result<ReadyEvent>> {
    if word & SHUTDOWN != 0 {
        return Some(Err(shutdown_error()));
    }
    ready_event(word, wants).map(Ok)
}

fn poll_of(verdict: Option<std::io::Result<ReadyEvent>>) -> Poll<std::io::Result<ReadyEvent>> {
    verdict.map_or(Poll::Pending, Poll::Ready)
}

/// Deregistered sources whose address may still be in an event a wait
/// has returned: kept until the thread holding the poller has dispatched
/// that wait's events (`runtime/io/driver.rs`, "Sources"). Generic so the loom
/// model can watch when an entry is dropped. One uncontended lock per
/// turn of the poller: deregistrations are rare next to turns.
pub(crate) struct ReleaseQueue<T> {
    items: Mutex<Vec<T>>,
}

impl<T> ReleaseQueue<T> {
    pub(crate) fn new() -> ReleaseQueue<T> {
        ReleaseQueue {
            items: Mutex::new(Vec::new()),
        }
    }

    /// Keeps `item` until the next `release` (called after the source's
    /// `epoll_ctl(DEL)`, so no wait that starts later can name it).
    pub(crate) fn defer(&self, item: T) {
        self.items.lock().unwrap().push(item);
    }

    /// Drops what was deferred. Only the poller's holder calls it, after
    /// dispatching its wait's events (or at shutdown, holding the poller).
    pub(crate) fn release(&self) {
        let items = std::mem::take(&mut *self.items.lock().unwrap());
        drop(items);
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;
