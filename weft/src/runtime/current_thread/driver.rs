//! The driving `block_on`: its loop, its sleep, and the wait of a
//! `block_on` whose runtime another thread drives.
//!
//! # The loop (`drive`)
//!
//! 1. If the `block_on` future was woken, poll it (first of all: a
//!    `block_on` whose future is ready returns before the queue is run).
//! 2. Run up to [`EVENT_INTERVAL`] tasks: the core's queue, the inject
//!    queue first every [`GLOBAL_QUEUE_INTERVAL`] tasks (as tokio does, a
//!    woken future waits for the batch: a future that yields in a loop
//!    must not starve the tasks it waits for). An empty queue ends the
//!    batch.
//! 3. Fire due timers and deliver ready I/O without blocking, then queue
//!    the tasks that woke themselves during their poll (a `yield_now`:
//!    deferred, as tokio does, so a task that yields in a loop runs once
//!    per turn, not until the batch is spent); with nothing to run, sleep
//!    (`park`).
//!
//! # The sleep (`park`)
//!
//! The driver sleeps on slot 0's parker as that slot's keeper of the time
//! driver: `begin_keeping` publishes its wake time (the earliest timer),
//! so an arm from another thread pokes it by `runtime/time/driver.rs`'s
//! handshake, and it sleeps in the reactor while a source is registered.
//! Everything that must wake it unparks slot 0 after publishing its work
//! (a push to the inject queue, the `block_on` future's waker, a timer's
//! poke, shutdown): the parker's token is set under its mutex, so a wake
//! that lands between the driver's last look and its sleep makes the sleep
//! return at once (correctness: no lost wake-up; `tests/current_thread.rs`'s
//! wakes from other threads).
//!
//! # A `block_on` without the core (`UntilCore`)
//!
//! It polls only its own future (on `block_on::run`'s thread waker), and
//! registers that waker to be woken when the core is put back, then tries
//! to take it: whichever comes first, the wake or the put-back, it sees.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use super::{Core, CurrentThread, EVENT_INTERVAL, GLOBAL_QUEUE_INTERVAL, SLOT};
use crate::runtime::context;
use crate::runtime::scheduler::Shared;
use crate::runtime::task::Task;
use crate::util::loom::sync::Arc;

/// How often a driver whose paused test clock may not jump yet looks again.
const PAUSED_CLOCK_RECHECK: Duration = Duration::from_millis(1);

/// The `block_on` future's waker while its thread drives: raises the flag,
/// then unparks slot 0 (the order the module doc's no-lost-wake-up rests
/// on: the flag is published before the token).
struct MainWaker {
    woken: AtomicBool,
    shared: Arc<Shared>,
}

impl Wake for MainWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &std::sync::Arc<Self>) {
        // A read-modify-write, as the loom model of this handshake has it
        // (`runtime/scheduler/park/loom_tests.rs`).
        self.woken.swap(true, Ordering::AcqRel);
        self.shared.unpark_slot(SLOT);
    }
}

impl MainWaker {
    fn take(&self) -> bool {
        self.woken.swap(false, Ordering::AcqRel)
    }

    fn is_woken(&self) -> bool {
        self.woken.load(Ordering::Acquire)
    }
}

/// Gives the core back however the driving `block_on` ends (its future
/// may panic).
struct CoreGuard<'a> {
    scheduler: &'a CurrentThread,
    core: Option<Box<Core>>,
}

impl Drop for CoreGuard<'_> {
    fn drop(&mut self) {
        if let Some(core) = self.core.take() {
            self.scheduler.put_core_back(core);
        }
    }
}

/// Drives the runtime until `future` completes (`Some`), or until the
/// runtime shuts down (`None`; the core is back by then).
pub(super) fn drive<F: Future>(
    scheduler: &Arc<CurrentThread>,
    core: Box<Core>,
    mut future: Pin<&mut F>,
) -> Option<F::Output> {
    let shared = &scheduler.shared;
    let guard = CoreGuard {
        scheduler,
        core: Some(core),
    };
    let core: &Core = guard.core.as_deref().expect("the core was just taken");
    let _on_core = context::set_current_thread_core(core);
    let main = std::sync::Arc::new(MainWaker {
        woken: AtomicBool::new(true),
        shared: shared.clone(),
    });
    let waker = Waker::from(main.clone());
    let mut cx = Context::from_waker(&waker);
    let _watching = shared.panic_policy.watch(&waker);
    let _polling = Polling::start(shared);
    loop {
        shared.panic_policy.check();
        if shared.is_shutdown() {
            return None;
        }
        if main.take() {
            let saved = crate::task::coop::reset();
            crate::util::locks::user_code("block_on's poll of its future");
            let polled = future.as_mut().poll(&mut cx);
            crate::task::coop::restore(saved);
            if let Poll::Ready(output) = polled {
                shared.panic_policy.check();
                return Some(output);
            }
        }
        let more = run_batch(scheduler, core);
        if more || core.has_deferred() {
            // The batch ran its length, or tasks yielded: a look at the
            // timers and the reactor without sleeping, then the yielded
            // tasks run again.
            fire_timers(shared);
            deliver_io_now(shared);
            core.wake_deferred();
        } else {
            park(scheduler, core, &main);
        }
    }
}

/// Runs up to `EVENT_INTERVAL` tasks; returns whether there may be more
/// (`false`: the queues were found empty).
fn run_batch(scheduler: &CurrentThread, core: &Core) -> bool {
    for _ in 0..EVENT_INTERVAL {
        if scheduler.shared.is_shutdown() {
            return true;
        }
        let Some(task) = next_task(scheduler, core) else {
            return false;
        };
        run_task(&scheduler.shared, task);
    }
    true
}

fn next_task(scheduler: &CurrentThread, core: &Core) -> Option<Task> {
    let tick = core.tick.get().wrapping_add(1);
    core.tick.set(tick);
    if tick % GLOBAL_QUEUE_INTERVAL == 0 {
        scheduler.pop_inject().or_else(|| core.pop())
    } else {
        core.pop().or_else(|| scheduler.pop_inject())
    }
}

fn run_task(shared: &Shared, task: Task) {
    shared.remotes[SLOT].counters.polls.incr();
    task.metadata().check_published();
    // A fresh cooperative budget for each poll (`task/coop.rs`); the
    // `block_on` future's is its own.
    let saved = crate::task::coop::reset();
    let _ = crate::util::locks::call_user("a task's poll (current thread)", move || task.run());
    crate::task::coop::restore(saved);
}

/// Fires every due timer (their tasks land in the core's queue).
fn fire_timers(shared: &Shared) -> bool {
    let time = &shared.time;
    let now = time.clock.now_ns();
    let mut wakers = Vec::new();
    for wheel in 0..time.num_wheels() {
        if time.is_due(wheel, now) {
            while time.fire_due(wheel, now, true, &mut wakers) {}
        }
    }
    let fired = !wakers.is_empty();
    for waker in wakers {
        let _ = crate::util::locks::call_user("a waker's wake (fired timer)", || waker.wake());
    }
    fired
}

/// Delivers readiness already there, without blocking.
fn deliver_io_now(shared: &Shared) -> usize {
    shared.io.poll_ready_now()
}

fn has_work(scheduler: &CurrentThread, core: &Core, main: &MainWaker) -> bool {
    main.is_woken() || !core.is_empty() || !scheduler.inject_is_empty()
}

/// Sleeps until there is work: a wake (of the future or a task), a due
/// timer or readiness; returns at once if there is some already.
fn park(scheduler: &CurrentThread, core: &Core, main: &MainWaker) {
    let shared = &scheduler.shared;
    if fire_timers(shared) || deliver_io_now(shared) > 0 || has_work(scheduler, core, main) {
        return;
    }
    let hooks = &shared.config.park_hooks;
    if let Some(hook) = &hooks.on_park {
        let _ = crate::util::locks::call_user("on_thread_park", || hook());
    }
    let counters = &shared.remotes[SLOT].counters;
    counters.parks.incr();
    shared.block_on_polling(false);
    let time = &shared.time;
    if let Some(wake_at) = time.begin_keeping(SLOT) {
        if !has_work(scheduler, core, main) && !shared.is_shutdown() {
            sleep_until(shared, wake_at);
        }
    } else {
        // Another slot keeps time: none does on this flavor (slot 0 is the
        // only one), so this is a worker's sleep without a timeout, kept
        // so that a change there cannot make the driver spin.
        shared.remotes[SLOT].parker.park();
    }
    time.end_keeping(SLOT);
    shared.block_on_polling(true);
    counters.unparks.incr();
    if let Some(hook) = &hooks.on_unpark {
        let _ = crate::util::locks::call_user("on_thread_unpark", || hook());
    }
    fire_timers(shared);
}

/// Sleeps on slot 0's parker until `wake_at` (ns on the runtime's clock;
/// `u64::MAX`: no timer), an unpark, or readiness.
fn sleep_until(shared: &Shared, wake_at: u64) {
    let time = &shared.time;
    if time.clock.is_paused() && wake_at != u64::MAX {
        if deliver_io_now(shared) > 0 {
            return;
        }
        #[cfg(feature = "test-util")]
        if shared.may_auto_advance_current_thread() {
            time.clock.advance_to(wake_at);
            return;
        }
        sleep(shared, Some(PAUSED_CLOCK_RECHECK));
        return;
    }
    if wake_at == u64::MAX {
        sleep(shared, None);
        return;
    }
    let now = time.clock.now_ns();
    if wake_at > now {
        sleep(shared, Some(Duration::from_nanos(wake_at - now)));
    }
}

/// The sleep itself: in the reactor's poller while a source is registered
/// (readiness wakes it; its tasks land in the core's queue), on the
/// parker's condvar otherwise (`runtime/scheduler/park.rs`).
fn sleep(shared: &Shared, timeout: Option<Duration>) {
    let parker = &shared.remotes[SLOT].parker;
    if shared.io.num_registered() == 0 {
        match timeout {
            None => parker.park(),
            Some(timeout) => {
                parker.park_timeout(timeout);
            }
        }
        return;
    }
    parker.park_in_poller(|| {
        shared.io.wait(timeout, || parker.has_token());
    });
}

/// Counts the driving `block_on` as polling (the paused test clock's rule)
/// until dropped; `park` uncounts it while it sleeps.
struct Polling<'a>(&'a Shared);

impl Polling<'_> {
    fn start(shared: &Shared) -> Polling<'_> {
        shared.block_on_polling(true);
        Polling(shared)
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        self.0.block_on_polling(false);
    }
}

/// What a `block_on` without the core waited for.
pub(super) enum Waited<T> {
    /// Its future completed.
    Done(T),
    /// The core was put back and this `block_on` took it.
    Core(Box<Core>),
}

/// A `block_on`'s future, polled until it completes or the core is free.
pub(super) struct UntilCore<'a, F> {
    scheduler: &'a CurrentThread,
    future: Pin<&'a mut F>,
}

impl<'a, F> UntilCore<'a, F> {
    pub(super) fn new(scheduler: &'a CurrentThread, future: Pin<&'a mut F>) -> Self {
        UntilCore { scheduler, future }
    }
}

impl<F: Future> Future for UntilCore<'_, F> {
    type Output = Waited<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(core) = self.scheduler.take_core() {
            return Poll::Ready(Waited::Core(core));
        }
        if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Waited::Done(output));
        }
        self.scheduler.wait_for_core(cx.waker());
        // Put back between the first look and the registration: take it.
        match self.scheduler.take_core() {
            Some(core) => Poll::Ready(Waited::Core(core)),
            None => Poll::Pending,
        }
    }
}
