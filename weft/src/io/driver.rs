//! The reactor: one OS poller (`mio`, epoll on Linux) per runtime, waited
//! on by the worker that keeps time, polled without blocking by busy
//! workers.
//!
//! # Who waits in the poller
//!
//! The sleeping worker that keeps time (`time/driver.rs`'s keeper) waits in
//! `epoll_wait` with the next timer deadline as its timeout instead of on
//! its condvar, while any source is registered (with none it keeps the
//! condvar, and a runtime without sockets parks exactly as before: with
//! the keeper always in epoll, one scheduler-lane run gave
//! spawn_many_remote_busy1 1.64 ms against a 1.09 ms baseline, and with
//! this gate two runs gave 0.97-0.99 ms; the first registration pokes the
//! keeper over); the other sleeping workers park
//! as before
//! (`scheduler/park.rs`). Waking the keeper writes the poller's eventfd
//! (`Parker::unpark` knows which kind of sleep it interrupts). A keeper
//! woken by readiness wakes the tasks (into its own queue, as fired timers
//! are), gives up the poller with the keeper role, and wakes a parked
//! worker to take both over, so readiness is not left waiting behind the
//! first woken task's poll. Busy workers look at the poller without
//! blocking at their periodic check (`try_lock`: if the keeper holds it,
//! it is already waiting for events), and only while some source is
//! registered, so a runtime without sockets pays nothing.
//!
//! # Sources
//!
//! Each source is registered once, edge-triggered, for both directions.
//! Its readiness lives in one atomic word of its `ScheduledIo`
//! (`scheduled_io.rs`); the token given to epoll is the address of that
//! `ScheduledIo`, so a delivery finds it without a lookup or a lock. The
//! address stays valid while an event may name it: the set of registered
//! sources holds a reference until the source is deregistered, and a
//! deregistered source's reference is dropped only by the holder of the
//! poller after it has dispatched the events of its current wait (the
//! deregistration — `epoll_ctl(DEL)` — happened before, so no later wait
//! returns the token).
//!
//! # Locks
//!
//! The readiness path (deliver, wake, poll, clear) takes only the
//! source's own waiter mutex. `sources`, a mutex over the set of
//! registered sources, is taken once per registration and once per
//! deregistration (to wake everything at shutdown), never per operation.
//!
//! # At 64 cores
//!
//! tokio's single epoll instance becomes the bottleneck at 64 workers
//! (tokio #8450: `epoll_ctl` p50 75 µs and 87,000 accepted connections/s
//! with one epoll, 3 µs and 211,000/s with 8): the kernel serializes every
//! `epoll_ctl` and every `epoll_wait` of one instance on its mutex. weft's
//! readiness path above never touches a shared line beyond the source's
//! own; what remains shared at 64 cores is that one epoll instance and the
//! `sources` mutex, both per connection, not per operation. The planned
//! answer is shards: `N = workers / 8` (rounded up) epoll instances, each
//! with its own `sources` set, a source registered on the shard of the
//! worker that opened it, each shard's epoll fd registered in the keeper's
//! top-level epoll so one thread still waits for all. Not built yet: at
//! the 2 to 8 workers measured here there is one shard, and the structure
//! above (token = address, per-shard set, release by the poller's holder)
//! carries over shard by shard unchanged.
//!
//! # Shutdown
//!
//! `shut_down` marks every registered source shut down and wakes its
//! waiters; an operation on such a source, or a registration after that,
//! returns an error.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Waker;
use std::time::Duration;

use mio::event::Source;
use mio::{Events, Interest, Poll, Registry, Token};

use super::scheduled_io::{
    ERROR, READ_CLOSED, READABLE, ReleaseQueue, ScheduledIo, WRITABLE, WRITE_CLOSED, shutdown_error,
};

/// Events taken per wait (tokio takes 1024 too).
const EVENTS_PER_TURN: usize = 1024;
/// The token of the poller's own waker (no `ScheduledIo` lives at 0).
const WAKER_TOKEN: Token = Token(0);

struct PollState {
    poll: Poll,
    events: Events,
    /// Wakers of ready tasks, woken after the delivery loop (kept to reuse
    /// the allocation).
    wakers: Vec<Waker>,
}

struct Sources {
    /// Registered sources by address (their token), for shutdown.
    registered: HashMap<usize, Arc<ScheduledIo>>,
    closed: bool,
}

pub(crate) struct Driver {
    poll: Mutex<PollState>,
    registry: Registry,
    waker: mio::Waker,
    sources: Mutex<Sources>,
    /// Deregistered sources whose address may still be in a delivered
    /// event: dropped by the poller's holder after its dispatch.
    pending_release: ReleaseQueue<Arc<ScheduledIo>>,
    /// How many sources are registered: busy workers skip the poller while
    /// it is zero.
    num_registered: AtomicUsize,
}

/// A source's registration: what its owner keeps to poll readiness.
pub(crate) struct Registered {
    pub(crate) io: Arc<ScheduledIo>,
    /// The first source registered (the count went from 0): a keeper
    /// sleeping on its condvar must be poked to move into the poller.
    pub(crate) first: bool,
}

impl Driver {
    pub(crate) fn new() -> io::Result<Driver> {
        let poll = Poll::new()?;
        let registry = poll.registry().try_clone()?;
        let waker = mio::Waker::new(&registry, WAKER_TOKEN)?;
        Ok(Driver {
            poll: Mutex::new(PollState {
                poll,
                events: Events::with_capacity(EVENTS_PER_TURN),
                wakers: Vec::new(),
            }),
            registry,
            waker,
            sources: Mutex::new(Sources {
                registered: HashMap::new(),
                closed: false,
            }),
            pending_release: ReleaseQueue::new(),
            num_registered: AtomicUsize::new(0),
        })
    }

    /// Registers `source` for both directions, edge-triggered.
    pub(crate) fn register(&self, source: &mut impl Source) -> io::Result<Registered> {
        let io = Arc::new(ScheduledIo::new());
        let token = Token(Arc::as_ptr(&io) as usize);
        {
            let mut sources = self.sources.lock().unwrap();
            if sources.closed {
                return Err(shutdown_error());
            }
            sources.registered.insert(token.0, io.clone());
        }
        if let Err(error) =
            self.registry
                .register(source, token, Interest::READABLE | Interest::WRITABLE)
        {
            self.forget(&io);
            return Err(error);
        }
        let first = self.num_registered.fetch_add(1, Ordering::Relaxed) == 0;
        if first {
            // Pairs with the fence in the keeper's `begin_keeping`: either
            // the keeper reads the new count after its fence and sleeps in
            // the poller, or the caller's look at the keeper word (after
            // this fence) finds it and pokes it (`Registered::first`).
            std::sync::atomic::fence(Ordering::SeqCst);
        }
        Ok(Registered { io, first })
    }

    /// Deregisters `source` (its owner is done with it) and schedules the
    /// release of its `ScheduledIo`.
    pub(crate) fn deregister(&self, source: &mut impl Source, registered: &Registered) {
        // Fails only if the runtime's poller is gone or the fd was closed
        // under us; either way no event can name it any more.
        let _ = self.registry.deregister(source);
        self.num_registered.fetch_sub(1, Ordering::Relaxed);
        self.forget(&registered.io);
    }

    fn forget(&self, io: &Arc<ScheduledIo>) {
        // The waiters' wakers hold tasks (and through them the runtime):
        // out now, dropped below, outside every lock.
        let mut wakers = Vec::new();
        io.take_waiters(&mut wakers);
        let address = Arc::as_ptr(io) as usize;
        let (released, closed) = {
            let mut sources = self.sources.lock().unwrap();
            (sources.registered.remove(&address), sources.closed)
        };
        if let Some(released) = released {
            if closed {
                // No turn will release it any more: release it here, under
                // the poller's lock so no turn is dispatching meanwhile
                // (after shutdown no one waits in the poller for long).
                let _poller = self.poll.lock().unwrap();
                drop(released);
            } else {
                self.pending_release.defer(released);
            }
        }
        drop(wakers);
    }

    /// Wakes the thread waiting in the poller, if any (or makes its next
    /// wait return at once).
    pub(crate) fn wake(&self) {
        // Fails only if the eventfd is gone (the runtime is being dropped).
        let _ = self.waker.wake();
    }

    /// Waits for readiness up to `timeout` (`None`: until woken), delivers
    /// it, and returns how many wakers it woke. Blocks on the poller's lock
    /// if a busy worker is looking at it (for a few microseconds).
    ///
    /// `woken_meanwhile` is asked under the poller's lock, before blocking:
    /// a busy worker's non-blocking look may have taken the wake-up event
    /// meant for this waiter (one eventfd edge, one taker), so the waiter's
    /// own flag (the parker's token, stored before the event is written)
    /// decides whether to block at all.
    pub(crate) fn wait(
        &self,
        timeout: Option<Duration>,
        woken_meanwhile: impl FnOnce() -> bool,
    ) -> usize {
        let state = self.poll.lock().unwrap();
        let timeout = if woken_meanwhile() {
            Some(Duration::ZERO)
        } else {
            timeout
        };
        self.turn(state, timeout)
    }

    /// Delivers readiness that is already there, without blocking; skipped
    /// when nothing is registered or another thread holds the poller.
    pub(crate) fn poll_ready_now(&self) -> usize {
        if self.num_registered.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        match self.poll.try_lock() {
            Ok(state) => self.turn(state, Some(Duration::ZERO)),
            Err(_) => 0,
        }
    }

    fn turn(
        &self,
        mut state: std::sync::MutexGuard<'_, PollState>,
        timeout: Option<Duration>,
    ) -> usize {
        let PollState {
            poll,
            events,
            wakers,
        } = &mut *state;
        if let Err(error) = poll.poll(events, timeout) {
            // EINTR: a signal; the caller loops. Anything else would repeat
            // on every wait: nothing to do about it here but not spin.
            if error.kind() != io::ErrorKind::Interrupted {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        for event in events.iter() {
            let token = event.token();
            if token == WAKER_TOKEN {
                continue;
            }
            let mut ready = 0;
            if event.is_readable() {
                ready |= READABLE;
            }
            if event.is_writable() {
                ready |= WRITABLE;
            }
            if event.is_read_closed() {
                ready |= READ_CLOSED;
            }
            if event.is_write_closed() {
                ready |= WRITE_CLOSED;
            }
            if event.is_error() {
                ready |= ERROR;
            }
            // SAFETY: the token is the address of a `ScheduledIo` that was
            // registered with it. That `ScheduledIo` is alive: the set of
            // registered sources holds it until deregistration, which moves
            // it to `pending_release`, and `pending_release` is emptied only
            // below, by this thread, after this loop, while it holds the
            // poller; the deregistration's `epoll_ctl(DEL)` came before the
            // move, so no later wait returns this token. (Module doc.)
            let io = unsafe { &*(token.0 as *const ScheduledIo) };
            io.set_readiness(ready, wakers);
        }
        self.pending_release.release();
        let woken = wakers.len();
        let mut to_wake = std::mem::take(wakers);
        drop(state);
        for waker in to_wake.drain(..) {
            // A foreign waker that panics must not take the worker down.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| waker.wake()));
        }
        // Give the allocation back if no one else took the poller since.
        if let Ok(mut state) = self.poll.try_lock() {
            if state.wakers.capacity() < to_wake.capacity() {
                state.wakers = to_wake;
            }
        }
        woken
    }

    /// Shutdown: every registered source fails from now on, and its
    /// waiters are woken to see it.
    pub(crate) fn shut_down(&self) {
        let mut wakers = Vec::new();
        {
            let mut sources = self.sources.lock().unwrap();
            sources.closed = true;
            for io in sources.registered.values() {
                io.shut_down(&mut wakers);
            }
        }
        {
            let _poller = self.poll.lock().unwrap();
            self.pending_release.release();
        }
        for waker in wakers {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| waker.wake()));
        }
    }

    /// Registered sources (for tests and metrics).
    pub(crate) fn num_registered(&self) -> usize {
        self.num_registered.load(Ordering::Relaxed)
    }
}
