//! The reactor: the OS pollers (`mio`, epoll on Linux) of a runtime, waited
//! on by the worker that keeps time, polled without blocking by busy
//! workers.
//!
//! # Who waits in the poller
//!
//! The sleeping worker that keeps time (`runtime/time/driver.rs`'s keeper) waits in
//! `epoll_wait` on the top poller (shard 0) with the next timer deadline as
//! its timeout instead of on its condvar, while any source is registered
//! (with none it keeps the condvar, so a runtime without sockets parks
//! exactly as before: a speed rule, as a keeper always in epoll made the
//! scheduler lane's remote spawns slower; the first registration pokes the
//! keeper over; measured: docs/experiments.md#reactor). The other sleeping
//! workers park as before (`runtime/scheduler/park.rs`). Waking the keeper writes
//! the top poller's eventfd (`Parker::unpark` knows which kind of sleep it
//! interrupts). A keeper
//! woken by readiness wakes the tasks (into its own queue, as fired timers
//! are), gives up the poller with the keeper role, and hands it to a
//! sleeping worker (`Core::hand_over_poller`), so readiness is not left
//! waiting behind the first woken task's poll. Busy workers look at their
//! shard (and the top poller) without blocking at their periodic check
//! (`try_lock`: a poller someone holds is being served), and only while
//! some source is registered, so a runtime without sockets pays nothing.
//!
//! # Correctness and cost
//!
//! Correctness: a deregistered source leaves its shard (`forget`), and a
//! shard with more sources ready than one turn takes is drained to the end
//! (`poll_and_deliver`); both pinned by the unit tests below. Costs only,
//! never a lost wake-up: the shard a source goes to (any shard is served,
//! the keeper waits on all through the top poller); the counts of tasks
//! woken that `poll_ready_now` and `drain_shard` return (they decide a
//! helper wake and, for a paused clock, whether it may jump); reusing the
//! top poller's waker buffer; the 1 ms nap after an error other than EINTR;
//! the keeper's condvar while nothing is registered (above).
//!
//! # Sources
//!
//! Each source is registered once, edge-triggered, for both directions,
//! on one shard. Its readiness lives in one atomic word of its
//! `ScheduledIo` (`scheduled_io.rs`); the token given to epoll is the
//! address of that `ScheduledIo`, so a delivery finds it without a lookup
//! or a lock. The address stays valid while an event may name it: the
//! shard's set of registered sources holds a reference until the source is
//! deregistered, and a deregistered source's reference is dropped only by
//! the holder of that shard's poller after it has dispatched the events of
//! its current wait (the deregistration — a successful `epoll_ctl(DEL)` —
//! happened before, so no later wait returns the token). A source whose
//! DEL fails (its number was closed while a duplicate keeps the file open)
//! is kept until the driver drops, since the kernel may still deliver its
//! token; any failure counts, `ENOENT` too, which says the number names
//! another file now, not that the registration is gone (unit tests
//! below, for `EBADF` and `ENOENT`). Tokens below
//! `FIRST_SOURCE_TOKEN` are the waker's and the shards' own (no
//! `ScheduledIo` lives at such an address).
//!
//! # Locks
//!
//! The readiness path (deliver, wake, poll, clear) takes only the
//! source's own waiter mutex. A shard's `sources` mutex is taken once per
//! registration and once per deregistration (to wake everything at
//! shutdown), never per operation.
//!
//! # At 64 cores: shards
//!
//! One epoll instance becomes the bottleneck at 64 workers (tokio #8450:
//! `epoll_ctl` p50 75 µs and 87,000 accepted connections/s with one epoll,
//! 3 µs and 211,000/s with 8): the kernel serializes every `epoll_ctl` and
//! `epoll_wait` of one instance on its mutex. So the reactor has `shards`
//! epoll instances (`Builder::io_shards`, default one per 8 workers,
//! rounded up), each with its own sources set, release queue and lock. A
//! source is registered on the shard of the worker that opens it (so the
//! worker that accepted a connection usually serves its readiness at its
//! periodic check), round-robin from outside the workers. Shard 0 is the
//! top: it holds the waker and every other shard's epoll fd (registered
//! edge-triggered for readable), so the one keeper still waits for all: an
//! event naming shard `i` makes it drain shard `i` without blocking, until
//! a turn returns less than a full batch (a partly drained shard would not
//! signal the top again). With 8 workers or fewer there is one shard and
//! none of that nesting.
//!
//! # Shutdown
//!
//! `shut_down` marks every registered source shut down and wakes its
//! waiters; an operation on such a source, or a registration after that,
//! returns an error.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Waker;
use std::time::Duration;

use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Registry, Token};

use super::registrations::Registrations;
use crate::util::locks::{StdMutex as Mutex, StdMutexGuard as MutexGuard};

use super::scheduled_io::{
    ERROR, PRIORITY, READ_CLOSED, READABLE, ReleaseQueue, ScheduledIo, WRITABLE, WRITE_CLOSED,
    shutdown_error,
};

/// Events taken per wait (tokio takes 1024 too).
const EVENTS_PER_TURN: usize = 1024;
/// The token of the top poller's own waker.
const WAKER_TOKEN: Token = Token(0);
/// Tokens `1..shards` name shards in the top poller (`Driver::new` checks
/// that they stay below this); a `ScheduledIo`'s address is never that
/// small (the first page of memory is never mapped).
const FIRST_SOURCE_TOKEN: usize = 4096;

use super::WORKERS_PER_SHARD;

struct PollState {
    poll: Poll,
    events: Events,
    /// Wakers of ready tasks, woken after the poller's lock is released;
    /// kept (top poller only) so a turn does not allocate.
    wakers: Vec<Waker>,
}

struct Sources {
    /// Registered sources by address (their token), for shutdown; with
    /// them the orphans, whose deregistration failed (`Driver::deregister`),
    /// kept until the driver drops.
    registered: HashMap<usize, Arc<ScheduledIo>>,
    /// How many of `registered` are orphans.
    orphaned: usize,
    closed: bool,
}

struct Shard {
    poll: Mutex<PollState>,
    registry: Registry,
    sources: Mutex<Sources>,
    /// Deregistered sources whose address may still be in a delivered
    /// event: dropped by this shard poller's holder after its dispatch.
    pending_release: ReleaseQueue<Arc<ScheduledIo>>,
}

pub(crate) struct Driver {
    /// Shard 0 is the top poller the keeper waits on.
    shards: Box<[Shard]>,
    waker: mio::Waker,
    /// How many sources are registered: busy workers skip the pollers
    /// while it is zero, and the keeper sleeps on its condvar.
    registrations: Registrations,
    /// Round-robin shard choice for registrations from outside the workers.
    next_shard: AtomicUsize,
}

/// A source's registration: what its owner keeps to poll readiness.
pub(crate) struct Registered {
    pub(crate) io: Arc<ScheduledIo>,
    shard: usize,
    /// The first source registered (the count went from 0): a keeper
    /// sleeping on its condvar must be poked to move into the poller.
    pub(crate) first: bool,
}

fn readiness_of(event: &mio::event::Event) -> u64 {
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
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if event.is_priority() {
        ready |= PRIORITY;
    }
    ready
}

fn wake_all(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        // A foreign waker that panics must not take the worker down.
        let _ = crate::util::locks::call_user("a waker's wake (readiness)", || waker.wake());
    }
}

impl Driver {
    /// A reactor of `shards` epoll instances (at least one).
    pub(crate) fn new(shards: usize) -> io::Result<Driver> {
        // The builder allows one shard per worker at most, and at most
        // `MAX_WORKER_THREADS` (4,096) workers.
        assert!(
            shards <= FIRST_SOURCE_TOKEN,
            "{shards} reactor shards: their tokens would reach the sources'"
        );
        let shards = (0..shards.max(1))
            .map(|_| {
                let poll = Poll::new()?;
                let registry = poll.registry().try_clone()?;
                Ok(Shard {
                    poll: Mutex::new(PollState {
                        poll,
                        events: Events::with_capacity(EVENTS_PER_TURN),
                        wakers: Vec::new(),
                    }),
                    registry,
                    sources: Mutex::new(Sources {
                        registered: HashMap::new(),
                        orphaned: 0,
                        closed: false,
                    }),
                    pending_release: ReleaseQueue::new(),
                })
            })
            .collect::<io::Result<Box<[Shard]>>>()?;
        let top = &shards[0].registry;
        let waker = mio::Waker::new(top, WAKER_TOKEN)?;
        for (index, shard) in shards.iter().enumerate().skip(1) {
            let fd = shard.poll.lock().unwrap().poll.as_raw_fd();
            top.register(&mut SourceFd(&fd), Token(index), Interest::READABLE)?;
        }
        Ok(Driver {
            shards,
            waker,
            registrations: Registrations::new(),
            next_shard: AtomicUsize::new(0),
        })
    }

    /// The shard a source opened now goes to: the calling worker's, or the
    /// next in turn from outside the workers.
    fn shard_for_caller(&self) -> usize {
        let n = self.shards.len();
        if n == 1 {
            return 0;
        }
        let worker = crate::runtime::context::with_core(|core| core.map(|core| core.index));
        match worker {
            Some(worker) => (worker / WORKERS_PER_SHARD) % n,
            None => self.next_shard.fetch_add(1, Ordering::Relaxed) % n,
        }
    }

    /// Registers `source` for both directions, edge-triggered.
    pub(crate) fn register(&self, source: &mut impl Source) -> io::Result<Registered> {
        let io = Arc::new(ScheduledIo::new());
        let token = Token(Arc::as_ptr(&io) as usize);
        debug_assert!(token.0 >= FIRST_SOURCE_TOKEN);
        let shard_index = self.shard_for_caller();
        let shard = &self.shards[shard_index];
        {
            let mut sources = shard.sources.lock().unwrap();
            if sources.closed {
                return Err(shutdown_error());
            }
            sources.registered.insert(token.0, io.clone());
        }
        if let Err(error) =
            shard
                .registry
                .register(source, token, Interest::READABLE | Interest::WRITABLE)
        {
            self.forget(shard_index, &io);
            return Err(error);
        }
        let first = self.registrations.add();
        Ok(Registered {
            io,
            shard: shard_index,
            first,
        })
    }

    /// Deregisters `source` (its owner is done with it) and schedules the
    /// release of its `ScheduledIo`, if the kernel confirmed the
    /// deregistration.
    ///
    /// A failed `EPOLL_CTL_DEL` may leave the registration in the kernel:
    /// epoll keys it by the open file, not the number, so if the number was
    /// closed while another descriptor (a `dup`, a forked child's copy)
    /// keeps the file open, DEL fails (`EBADF`, or `ENOENT` once the number
    /// names another file) and the old registration still delivers events
    /// carrying this source's token. Its `ScheduledIo` is then kept, in the
    /// shard's set of registered sources, until the driver drops: a token
    /// never outlives its pointee (tokio's `deregister_source` keeps it the
    /// same way). Sources whose descriptor weft owns (its sockets, and
    /// `AsyncFd`'s own duplicate) are never in that case.
    pub(crate) fn deregister(&self, source: &mut impl Source, registered: &Registered) {
        let deleted = self.shards[registered.shard]
            .registry
            .deregister(source)
            .is_ok();
        self.registrations.remove();
        if deleted {
            self.forget(registered.shard, &registered.io);
        } else {
            self.orphan(registered.shard, &registered.io);
        }
    }

    /// A source whose deregistration failed: its waiters are woken (their
    /// owner is gone) and its `ScheduledIo` stays in the shard's set, so an
    /// event the kernel still delivers for it finds it alive.
    fn orphan(&self, shard_index: usize, io: &Arc<ScheduledIo>) {
        let mut wakers = Vec::new();
        io.take_waiters(&mut wakers);
        self.shards[shard_index].sources.lock().unwrap().orphaned += 1;
        crate::util::locks::user_code("a waker's drop (deregistered source)");
        drop(wakers);
    }

    /// Sources kept after a failed deregistration (tests).
    #[cfg(test)]
    pub(crate) fn num_orphaned(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| shard.sources.lock().unwrap().orphaned)
            .sum()
    }

    /// The registrations the kernel holds in every shard's epoll instance,
    /// the waker's and the shards' own included (tests: read from
    /// `/proc/self/fdinfo`, one `tfd:` line per registration).
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn kernel_registrations(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| {
                // The registry's fd is a duplicate of the poller's (same
                // epoll instance), readable while a keeper waits in it.
                let fd = shard.registry.as_raw_fd();
                std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
                    .expect("an epoll fd's fdinfo")
                    .lines()
                    .filter(|line| line.starts_with("tfd:"))
                    .count()
            })
            .sum()
    }

    fn forget(&self, shard_index: usize, io: &Arc<ScheduledIo>) {
        let shard = &self.shards[shard_index];
        // The waiters' wakers hold tasks (and through them the runtime):
        // out now, dropped below, outside every lock.
        let mut wakers = Vec::new();
        io.take_waiters(&mut wakers);
        let address = Arc::as_ptr(io) as usize;
        let (released, closed) = {
            let mut sources = shard.sources.lock().unwrap();
            (sources.registered.remove(&address), sources.closed)
        };
        if let Some(released) = released {
            if closed {
                // No turn will release it any more: release it here, under
                // the shard's poller lock so no turn is dispatching
                // meanwhile (after shutdown no one waits in it for long).
                let _poller = shard.poll.lock().unwrap();
                drop(released);
            } else {
                shard.pending_release.defer(released);
            }
        }
        crate::util::locks::user_code("a waker's drop (deregistered source)");
        drop(wakers);
    }

    /// Wakes the thread waiting in the top poller, if any (or makes its
    /// next wait return at once).
    pub(crate) fn wake(&self) {
        // Fails only if the eventfd is gone (the runtime is being dropped).
        let _ = self.waker.wake();
    }

    /// Waits for readiness on the top poller up to `timeout` (`None`: until
    /// woken), delivers it (draining the shards it names), and returns how
    /// many wakers it woke. Blocks on the top poller's lock if a busy
    /// worker is looking at it (for a few microseconds).
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
        let state = self.shards[0].poll.lock().unwrap();
        let timeout = if woken_meanwhile() {
            Some(Duration::ZERO)
        } else {
            timeout
        };
        self.turn_top(state, timeout)
    }

    /// Whether any source is registered.
    pub(crate) fn has_sources(&self) -> bool {
        self.registrations.count() != 0
    }

    /// Delivers readiness that is already there, without blocking: the
    /// calling worker's shard, then the top poller; skipped when nothing is
    /// registered, and for a poller another thread holds.
    pub(crate) fn poll_ready_now(&self) -> usize {
        if self.registrations.count() == 0 {
            return 0;
        }
        let mut woken = 0;
        let own = self.shard_for_caller();
        if own != 0 {
            woken += self.drain_shard(own);
        }
        if let Ok(state) = self.shards[0].poll.try_lock() {
            woken += self.turn_top(state, Some(Duration::ZERO));
        }
        woken
    }

    /// One wait of the top poller, then the shards it named.
    fn turn_top(&self, mut state: MutexGuard<'_, PollState>, timeout: Option<Duration>) -> usize {
        let mut wakers = std::mem::take(&mut state.wakers);
        let mut named = Vec::new();
        self.poll_and_deliver(0, &mut state, timeout, &mut wakers, &mut named);
        drop(state);
        for shard in named {
            self.drain_shard_into(shard, &mut wakers);
        }
        let woken = wakers.len();
        wake_all(&mut wakers);
        // Give the allocation back, unless another thread holds the poller.
        if let Ok(mut state) = self.shards[0].poll.try_lock() {
            if state.wakers.capacity() < wakers.capacity() {
                state.wakers = wakers;
            }
        }
        woken
    }

    /// Drains shard `index` without blocking; returns how many wakers it
    /// woke. Skipped if another thread holds it (it is serving it).
    fn drain_shard(&self, index: usize) -> usize {
        let mut wakers = Vec::new();
        self.drain_shard_into(index, &mut wakers);
        let woken = wakers.len();
        wake_all(&mut wakers);
        woken
    }

    fn drain_shard_into(&self, index: usize, wakers: &mut Vec<Waker>) {
        let Ok(mut state) = self.shards[index].poll.try_lock() else {
            return;
        };
        // Until a turn returns less than a full batch: the top poller is
        // signalled again only by new events, not by ones left behind.
        while self.poll_and_deliver(
            index,
            &mut state,
            Some(Duration::ZERO),
            wakers,
            &mut Vec::new(),
        ) == EVENTS_PER_TURN
        {}
    }

    /// One `epoll_wait` of shard `index` (whose lock `state` is), delivery
    /// of its sources' readiness into `wakers`, the shards it names (top
    /// only) into `named`, then the release of what was deregistered.
    /// Returns how many events the wait returned.
    fn poll_and_deliver(
        &self,
        index: usize,
        state: &mut MutexGuard<'_, PollState>,
        timeout: Option<Duration>,
        wakers: &mut Vec<Waker>,
        named: &mut Vec<usize>,
    ) -> usize {
        let PollState { poll, events, .. } = &mut **state;
        if let Err(error) = poll.poll(events, timeout) {
            // EINTR: a signal; the caller loops. Anything else would repeat
            // on every wait: nothing to do about it here but not spin.
            if error.kind() != io::ErrorKind::Interrupted {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut count = 0;
        for event in events.iter() {
            count += 1;
            let token = event.token();
            if token == WAKER_TOKEN {
                continue;
            }
            if token.0 < FIRST_SOURCE_TOKEN {
                named.push(token.0);
                continue;
            }
            // The token is the address of a `ScheduledIo` registered on this
            // shard with it, alive: the shard's set of registered sources
            // holds it until a *successful* deregistration, which moves it
            // to the shard's `pending_release`, emptied only below, by this
            // thread, after this loop, while it holds this shard's poller;
            // that `epoll_ctl(DEL)` succeeded before the move, so no later
            // wait returns this token. A source whose DEL failed stays in
            // the set until the driver drops (`Driver::deregister`). Tokens
            // below `FIRST_SOURCE_TOKEN` were handled above. (Module doc,
            // "Sources".)
            // SAFETY: the pointee is alive for this loop, as said above.
            let io = unsafe { &*(token.0 as *const ScheduledIo) };
            io.set_readiness(readiness_of(event), wakers);
        }
        self.shards[index].pending_release.release();
        count
    }

    /// Shutdown: every registered source fails from now on, and its
    /// waiters are woken to see it.
    pub(crate) fn shut_down(&self) {
        let mut wakers = Vec::new();
        for shard in self.shards.iter() {
            {
                let mut sources = shard.sources.lock().unwrap();
                sources.closed = true;
                for io in sources.registered.values() {
                    io.shut_down(&mut wakers);
                }
            }
            let _poller = shard.poll.lock().unwrap();
            shard.pending_release.release();
        }
        wake_all(&mut wakers);
    }

    /// Registered sources (the keeper's choice of where to sleep, tests
    /// and metrics).
    pub(crate) fn num_registered(&self) -> usize {
        self.registrations.count()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;
    use std::task::{Context, Waker};
    use std::time::Duration;

    use mio::unix::SourceFd;

    use super::{Driver, EVENTS_PER_TURN};
    use crate::runtime::io::scheduled_io::Direction;

    /// A deregistered source leaves its shard's set of registered sources
    /// (`forget`): nothing the driver holds outlives its socket, except
    /// until the next turn's release. (`forget` made a no-op kept every
    /// socket's `ScheduledIo` for the runtime's life and passed every
    /// other test: no test counted the set.)
    #[test]
    fn a_deregistered_source_leaves_its_shard() {
        let driver = Driver::new(1).unwrap();
        let (mut a, mut b) = mio::net::UnixStream::pair().unwrap();
        let registered_a = driver.register(&mut a).unwrap();
        let registered_b = driver.register(&mut b).unwrap();
        let in_set = || driver.shards[0].sources.lock().unwrap().registered.len();
        assert_eq!(in_set(), 2);
        driver.deregister(&mut a, &registered_a);
        assert_eq!(in_set(), 1, "the deregistered source stayed registered");
        driver.deregister(&mut b, &registered_b);
        assert_eq!(in_set(), 0);
        assert_eq!(driver.num_registered(), 0);
    }

    /// A source whose `EPOLL_CTL_DEL` fails (its number was closed while a
    /// duplicate keeps the file open, so the kernel keeps the registration
    /// and goes on delivering its token) is kept alive while the driver
    /// lives, and released with it. (Released at once, as before, the next
    /// event wrote into freed memory: valgrind's `Invalid read ... in
    /// ScheduledIo::set_readiness`.)
    #[test]
    #[cfg(target_os = "linux")]
    fn a_source_whose_deregistration_fails_lives_as_long_as_the_driver() {
        use std::io::Write;
        use std::os::fd::AsRawFd;

        let driver = Driver::new(1).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let duplicate = a.try_clone().unwrap();
        let number = a.as_raw_fd();
        let registered = driver.register(&mut SourceFd(&number)).unwrap();
        let before = driver.kernel_registrations();
        drop(a);
        driver.deregister(&mut SourceFd(&number), &registered);
        assert_eq!(driver.num_orphaned(), 1, "DEL failed, yet it was released");
        assert_eq!(driver.num_registered(), 0);
        assert_eq!(
            driver.kernel_registrations(),
            before,
            "the kernel should still hold the registration this test is about"
        );
        let io = Arc::downgrade(&registered.io);
        drop(registered);
        b.write_all(b"x").unwrap();
        // The stale registration fires: delivered to the kept source.
        driver.wait(Some(Duration::ZERO), || false);
        assert!(io.upgrade().is_some(), "an orphan outlived by its token");
        drop(driver);
        assert!(io.upgrade().is_none(), "the driver's drop releases orphans");
        drop(duplicate);
    }

    /// The same, when the closed number already names another file: DEL
    /// then fails with `ENOENT` (epoll keys a registration by the file and
    /// the number, and the new file under that number is not registered),
    /// yet the old registration is alive (a duplicate keeps its file open)
    /// and still delivers this source's token. `ENOENT` is not "already
    /// gone": the source is kept as an orphan, as for `EBADF`. Fails with
    /// `ENOENT` taken as a completed delete in `Driver::deregister` (the
    /// source goes to the release queue and is freed after the next turn
    /// while the kernel still holds its token: a use-after-free at the
    /// next event), which the test above passes (its DEL fails with
    /// `EBADF`).
    #[test]
    #[cfg(target_os = "linux")]
    fn a_source_whose_number_names_another_file_is_kept_after_enoent() {
        use std::io::Write;
        use std::os::fd::AsRawFd;

        let driver = Driver::new(1).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let duplicate = a.try_clone().unwrap();
        let number = a.as_raw_fd();
        let registered = driver.register(&mut SourceFd(&number)).unwrap();
        let before = driver.kernel_registrations();
        // The number is closed and reused at once, for a file this driver
        // never registered (as another thread's `open` would reuse it).
        let (other, _other_peer) = std::os::unix::net::UnixStream::pair().unwrap();
        // `a` owns `number` and stays alive until the end of the test, so
        // the number is not closed or reused behind another owner's back:
        // from here `a` owns (and will close) a descriptor of `other`'s
        // socket under the same number.
        // SAFETY: integers only; `number` stays owned by `a` (above).
        let reused = unsafe { libc::dup2(other.as_raw_fd(), number) };
        assert_eq!(reused, number);
        let refused = driver.shards[0]
            .registry
            .deregister(&mut SourceFd(&number))
            .unwrap_err();
        assert_eq!(
            refused.raw_os_error(),
            Some(libc::ENOENT),
            "this test is about a DEL refused with ENOENT"
        );
        driver.deregister(&mut SourceFd(&number), &registered);
        assert_eq!(
            driver.num_orphaned(),
            1,
            "DEL failed with ENOENT, yet the source was released"
        );
        assert_eq!(driver.num_registered(), 0);
        assert_eq!(
            driver.kernel_registrations(),
            before,
            "the kernel should still hold the registration this test is about"
        );
        let io = Arc::downgrade(&registered.io);
        drop(registered);
        b.write_all(b"x").unwrap();
        // The stale registration fires: delivered to the kept source.
        driver.wait(Some(Duration::ZERO), || false);
        assert!(io.upgrade().is_some(), "an orphan outlived by its token");
        drop(driver);
        assert!(io.upgrade().is_none(), "the driver's drop releases orphans");
        drop((a, duplicate, other));
    }

    /// Raises this process's open-file soft limit to at least `needed`
    /// (up to the hard limit, which an unprivileged process may do).
    fn allow_open_files(needed: u64) {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `limit` is a valid, writable `rlimit` for the call.
        let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
        assert_eq!(read, 0);
        if limit.rlim_cur >= needed {
            return;
        }
        assert!(
            limit.rlim_max >= needed,
            "this test opens {needed} sockets; the hard limit on open files is {}",
            limit.rlim_max
        );
        limit.rlim_cur = needed;
        // SAFETY: `limit` is a valid `rlimit`, read above and raised within
        // its own hard limit.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) }, 0);
    }

    /// A shard other than the top with more sources ready than one wait
    /// takes (`EVENTS_PER_TURN`) is drained to the end when the top names
    /// it: the shard's fd is edge-triggered in the top poller, so what one
    /// turn leaves behind would wait for that shard's next event. (The
    /// turn count broken, `count += 1` made `*=`, stopped after one turn
    /// and passed every other test: none had that many sources ready.)
    #[test]
    fn a_shard_with_more_ready_sources_than_one_turn_takes_is_drained() {
        let on_shard_1 = EVENTS_PER_TURN + 16;
        allow_open_files(2 * on_shard_1 as u64 + 64);
        let driver = Driver::new(2).unwrap();
        // From outside a runtime, sources go to the shards in turn: 0, 1, ...
        let mut sockets = Vec::new();
        for _ in 0..2 * on_shard_1 {
            let mut socket = mio::net::UdpSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let registered = driver.register(&mut socket).unwrap();
            sockets.push((socket, registered));
        }
        let shard_1: Vec<_> = sockets.iter().filter(|(_, r)| r.shard == 1).collect();
        assert_eq!(shard_1.len(), on_shard_1);
        // On loopback a datagram is queued at its receiver when `send_to`
        // returns: every one of them is readable before the wait below.
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for (socket, _) in &shard_1 {
            sender.send_to(b"x", socket.local_addr().unwrap()).unwrap();
        }
        driver.wait(Some(Duration::ZERO), || false);
        let mut cx = Context::from_waker(Waker::noop());
        let unread = shard_1
            .iter()
            .filter(|(_, r)| r.io.poll_ready(&mut cx, Direction::Read).is_pending())
            .count();
        assert_eq!(
            unread, 0,
            "{unread} of {on_shard_1} readable sources on shard 1 were not delivered"
        );
        for (mut socket, registered) in sockets {
            driver.deregister(&mut socket, &registered);
        }
    }
}
