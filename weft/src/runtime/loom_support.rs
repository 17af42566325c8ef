//! Helpers shared by the loom models (`cfg(all(test, loom))` only).
//!
//! Two kinds of models use them: the scheduler's (worker loop, queues,
//! idle protocol, monitor), on a real `Shared` without threads
//! ([`shared`] and its variants), and the task cell's (the join cell,
//! `JoinSet`, the publication check), on [`TestScheduler`], which builds no
//! runtime: the cell reaches its scheduler only through `Schedule`.
//!
//! # Why the models need these
//!
//! loom runs every modelled thread as a coroutine on the test's OS thread,
//! and it replays a recorded prefix of scheduling decisions to explore the
//! next interleaving. So every iteration of a model must do the same thing
//! given the same decisions. Two pieces of weft state live in `std`
//! thread-locals, which loom does not reset between iterations:
//!
//! - `scheduler::context` (the current worker core): never set in the models,
//!   so every wake takes the remote path, as a wake from outside does.
//! - the task registry's round-robin shard counter (`NEXT_SHARD`): a task
//!   registered from outside picks its shard from it. Left alone, the
//!   shard a task lands on would depend on the previous iteration, and with
//!   it which mutex a thread blocks on: the replay would diverge.
//!   [`realign_registry_round_robin`], called at the *end* of an iteration,
//!   brings the counter back to the same value after every iteration.
//!
//! Counters that only observe (polls, drops) are `std` atomics: they are not
//! part of any protocol, and loom executes one thread at a time, so they
//! read exactly what happened in the interleaving being explored without
//! adding states to explore.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use crate::runtime::blocking::{BlockingPool, PoolConfig};
use crate::runtime::scheduler::monitor::{Monitor, MonitorConfig};
use crate::runtime::scheduler::queue::Local;
use crate::runtime::scheduler::{Config, Shared};
use crate::runtime::task::{Registry, Task};
use crate::util::loom::sync::Arc;

/// The task cell's models' scheduler: a queue the model's threads run, no
/// runtime (`runtime/task/schedule/test_scheduler.rs`).
pub(crate) use crate::runtime::task::schedule::TestScheduler;

/// The shared state of a runtime with `num_workers` workers and default
/// settings, and each worker's ring; no thread is started. (The one place
/// the models spell out `Config`: a new setting is added here.)
pub(crate) fn shared(num_workers: usize) -> (Arc<Shared>, Vec<Local<Task>>) {
    shared_with_spares(num_workers, 0)
}

/// As [`shared`], with `spare_slots` slots for spare threads after the
/// workers' (their rings come last in the returned vector).
pub(crate) fn shared_with_spares(
    num_workers: usize,
    spare_slots: usize,
) -> (Arc<Shared>, Vec<Local<Task>>) {
    build_shared(num_workers, spare_slots, false, |_| {})
}

/// As [`shared`], with `tweak` applied to the default settings first.
pub(crate) fn shared_with(
    num_workers: usize,
    tweak: impl FnOnce(&mut Config),
) -> (Arc<Shared>, Vec<Local<Task>>) {
    build_shared(num_workers, 0, false, tweak)
}

/// As [`shared`], with the stall monitor enabled (no monitor thread runs:
/// the model drives the monitor's side itself).
pub(crate) fn shared_with_monitor(num_workers: usize) -> (Arc<Shared>, Vec<Local<Task>>) {
    build_shared(num_workers, 0, true, |_| {})
}

/// As [`shared_with_spares`], with the stall monitor enabled; its spare
/// slots are still to be given to it (`Monitor::add_spare_slots`).
pub(crate) fn shared_with_monitor_and_spares(
    num_workers: usize,
    spare_slots: usize,
) -> (Arc<Shared>, Vec<Local<Task>>) {
    build_shared(num_workers, spare_slots, true, |_| {})
}

fn build_shared(
    num_workers: usize,
    spare_slots: usize,
    monitor_enabled: bool,
    tweak: impl FnOnce(&mut Config),
) -> (Arc<Shared>, Vec<Local<Task>>) {
    let mut config = Config {
        name: None,
        num_workers,
        inject_batch_cap: 32,
        lifo_slot: true,
        global_check_target_ns: 200_000,
        poll_time_sample_every: 16,
        demote_slow_tasks: true,
        batch_share: 0.25,
        spare_slots,
        io_shards: 1,
        time_slices: false,
        fine_timer_slack: false,
        unhandled_panic: crate::runtime::scheduler::panic_policy::UnhandledPanic::Ignore,
        global_queue_interval: None,
        park_hooks: crate::runtime::scheduler::ParkHooks::default(),
        io_disabled: false,
        time_disabled: false,
    };
    tweak(&mut config);
    // The models never spawn blocking tasks; the pool only has to exist.
    let blocking = BlockingPool::new(PoolConfig {
        max_threads: 1,
        keep_alive: std::time::Duration::from_secs(1),
        thread_name: std::sync::Arc::new(|| "weft-blocking".to_owned()),
        stack_size: None,
        on_thread_start: None,
        on_thread_stop: None,
    });
    // No monitor thread runs in the models (the monitor's models drive its
    // side themselves, `runtime/scheduler/monitor/loom_tests.rs`).
    let monitor = Monitor::new(
        MonitorConfig {
            enabled: monitor_enabled,
            stall_threshold: std::time::Duration::from_millis(1),
            slow_poll_threshold: std::time::Duration::from_millis(10),
            spare_idle_timeout: std::time::Duration::from_secs(1),
            on_stall: None,
            spawn_thread: Box::new(|_, _, _| {
                Err(std::io::Error::other("no threads in loom models"))
            }),
            spawner_name: "weft-spawner".to_owned(),
            demote_threads: false,
        },
        spare_slots,
    );
    Shared::new(
        config,
        blocking,
        monitor,
        crate::runtime::tokio_compat::TokioContext::none(),
    )
    .expect("no fallible part under loom")
}

/// `task::spawn_on` with a plain spawn's options, on the real scheduler
/// (`Shared`) or the cell's test scheduler ([`TestScheduler`]).
#[track_caller]
pub(crate) fn spawn_on<S, F>(scheduler: &Arc<S>, future: F) -> crate::task::JoinHandle<F::Output>
where
    S: crate::runtime::task::Schedule,
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let options = crate::runtime::task::SpawnOptions::plain(std::panic::Location::caller());
    crate::runtime::task::spawn_on(scheduler, future, options)
}

/// As [`spawn_on`], into `lane` (`task::Builder::lane`'s path: a lane other
/// than `Default` goes through `Shared::schedule_lane`).
#[track_caller]
pub(crate) fn spawn_on_lane<F>(
    shared: &Arc<Shared>,
    future: F,
    lane: crate::task::Lane,
) -> crate::task::JoinHandle<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut options = crate::runtime::task::SpawnOptions::plain(std::panic::Location::caller());
    options.lane = lane;
    crate::runtime::task::spawn_on(shared, future, options)
}

/// Brings the registry's round-robin counter on this OS thread to the value
/// after which the next registration from outside a worker uses shard 0.
///
/// Call it as the last thing in a model's closure: the number of
/// registrations it makes then depends only on the interleaving explored
/// (the counter is at the same value when every iteration starts), so the
/// model stays deterministic.
pub(crate) fn realign_registry_round_robin(num_workers: usize) {
    let shards = (num_workers * 4).next_power_of_two();
    let scratch = Registry::new(num_workers);
    let first = crate::runtime::task::PollEnd {
        clock_ns: 0,
        timed: None,
    };
    for _ in 0..shards {
        let entry = scratch
            .insert(None, Waker::noop().clone(), std::ptr::null(), first)
            .expect("a fresh registry is open");
        // SAFETY: entries live as long as their registry (`scratch`).
        if unsafe { entry.as_ref() }.shard() as usize == shards - 1 {
            return;
        }
    }
    unreachable!("round robin over {shards} shards never reached the last one");
}

/// Counts events (drops, polls) without being part of the model.
#[derive(Clone, Default)]
pub(crate) struct Count(std::sync::Arc<AtomicUsize>);

impl Count {
    pub(crate) fn incr(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Increments its counter when dropped: put one in a future to count how
/// many times that future is dropped.
pub(crate) struct DropProbe(pub(crate) Count);

impl Drop for DropProbe {
    fn drop(&mut self) {
        self.0.incr();
    }
}

/// Runs `future` to completion on the current loom thread, parking it
/// (loom's park, so a lost wake-up is a reported deadlock) while it is
/// pending. (loom's own `block_on` needs its `futures` feature.)
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(loom::thread::Thread);

    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }

    let waker = Waker::from(std::sync::Arc::new(Unpark(loom::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        loom::thread::park();
    }
}

/// A loom object that both sides of a race loom cannot see touch, before
/// and after their part of it.
///
/// loom explores alternative orders only between operations on the *same
/// loom object* (partial order reduction): two threads whose race is on
/// `std` atomics, such as async-task's state word, look independent to it,
/// and it would try one order only. Touching one shared loom atomic at the
/// edges of each side makes the sides dependent, so loom tries every order
/// of those edges (and with them of the `std` transitions between them).
#[derive(Clone)]
pub(crate) struct RacePoint(Arc<crate::util::loom::sync::atomic::AtomicUsize>);

impl RacePoint {
    pub(crate) fn new() -> RacePoint {
        RacePoint(Arc::new(crate::util::loom::sync::atomic::AtomicUsize::new(
            0,
        )))
    }

    pub(crate) fn touch(&self) {
        self.0
            .fetch_add(1, crate::util::loom::sync::atomic::Ordering::AcqRel);
    }
}

/// A flag a task raises and a thread waits for (loom's `Mutex` and
/// `Condvar`, so a wait no raise can end is a deadlock loom reports).
#[derive(Clone, Default)]
pub(crate) struct Signal(Arc<(loom::sync::Mutex<bool>, loom::sync::Condvar)>);

impl Signal {
    pub(crate) fn raise(&self) {
        let (flag, raised) = &*self.0;
        *flag.lock().unwrap() = true;
        raised.notify_all();
    }

    pub(crate) fn wait(&self) {
        let (flag, raised) = &*self.0;
        let mut up = flag.lock().unwrap();
        while !*up {
            up = raised.wait(up).unwrap();
        }
    }
}

/// A task that raises `ran` when polled, after waiting for `first` if
/// given (a long poll: it holds its worker until then).
pub(crate) struct Raise {
    pub(crate) ran: Signal,
    pub(crate) first: Option<Signal>,
}

impl Future for Raise {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if let Some(first) = &self.first {
            first.wait();
        }
        self.ran.raise();
        Poll::Ready(())
    }
}
