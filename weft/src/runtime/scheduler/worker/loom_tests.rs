//! loom models of the sleep/wake protocol through the code that runs: two
//! real workers (`Core::run`: `next_task`, `search`, `spin_for_work`,
//! `stop_searching`, `park` on the real `Parker`, the idle state word and
//! the timekeeping handshake on the way) and a spawner outside the runtime
//! (`spawn_on`, `schedule_remote`, `schedule_lane`). Each worker thread
//! installs its core as a real worker thread does (`context` is loom's
//! thread-local under `cfg(loom)`), so a task that spawns from inside its
//! poll takes the local path (`schedule_local`: the LIFO slot, the ring).
//!
//! A model waits for its tasks to *run* before it shuts the runtime down,
//! so shutdown cannot mask a stranded task: if a wake-up is lost, every
//! worker sleeps while the spawner waits for the task, and loom reports the
//! deadlock.
//!
//! Each was shown to fail with its rule broken on purpose:
//! - both two-worker models fail (loom reports the deadlock) without the
//!   re-check before sleeping (`Core::park` calling
//!   `notify_if_work_pending`, rule 4 of `idle.rs`);
//! - `work_behind_a_long_poll_reaches_the_sleeping_worker` fails without the
//!   wake in `stop_searching` (rule 4 after a successful search), and
//!   failed with the re-check made by the last searcher only (tokio's
//!   rule, and weft's until this model found the interleaving that strands
//!   the task: see `idle.rs`);
//! - `a_latency_spawn_reaches_one_of_two_workers_going_to_sleep` fails
//!   without `schedule_lane`'s wake;
//! - `tasks_spawned_on_a_worker_run_once_while_the_other_steals` fails
//!   when `schedule_local` loses the task its LIFO slot displaced.
//!
//! What these models do not claim: a task left in the LIFO slot or ring of
//! a worker whose poll then blocks *waiting for that task* is not a wake-up
//! the sleep protocol owes (the owner runs its own queue after the poll;
//! the local push's wake is for parallelism, `Core::push_back` says why):
//! rescuing it is the stall monitor's job (`tests/lanes.rs`,
//! `a_task_spawned_by_a_stuck_poll_runs_while_it_is_stuck`). A model of
//! that case deadlocks, as it should without the monitor.
//!
//! Bound: `LOOM_MAX_PREEMPTIONS` as CI sets it; `SPIN_ROUNDS` is 1 under
//! loom.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use loom::sync::Arc;
use loom::thread;

use crate::runtime::loom_support::realign_registry_round_robin;
use crate::runtime::loom_support::spawn_on;
use crate::runtime::loom_support::spawn_on_lane;
use crate::runtime::loom_support::{Raise, Signal};
use crate::runtime::scheduler::Shared;
use crate::runtime::scheduler::worker::Core;
use crate::runtime::task::Lane;

const WORKERS: usize = 2;

/// A task that spawns two children from inside its poll, so through its
/// worker's local path: the first into the LIFO slot, which the second
/// then takes, pushing the first to the ring.
struct SpawnTwo {
    shared: Arc<Shared>,
    children_ran: [Signal; 2],
}

impl Future for SpawnTwo {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        for ran in &self.children_ran {
            let child = Raise {
                ran: ran.clone(),
                first: None,
            };
            drop(spawn_on(&self.shared, child));
        }
        Poll::Ready(())
    }
}

/// Starts both workers' run loops.
fn start_workers(
    shared: &Arc<Shared>,
    locals: Vec<crate::runtime::scheduler::queue::Local<crate::runtime::task::Task>>,
) -> Vec<thread::JoinHandle<()>> {
    locals
        .into_iter()
        .enumerate()
        .map(|(index, local)| {
            let core = Core::new(index, shared.clone(), local);
            thread::spawn(move || {
                // As a worker thread does: tasks polled here spawn and wake
                // through this core (LIFO slot, own ring).
                let exit = {
                    let _core = crate::runtime::context::set_core(&core);
                    core.run()
                };
                assert_eq!(exit, super::RunExit::Shutdown);
                core.close();
            })
        })
        .collect()
}

/// Shuts down as `Runtime::shutdown` does and checks the idle invariants.
fn shut_down(shared: Arc<Shared>, workers: Vec<thread::JoinHandle<()>>) {
    shared.begin_shutdown();
    for worker in workers {
        worker.join().unwrap();
    }
    shared.shutdown_drain();
    let counts = shared.idle.counts();
    assert_eq!(
        counts.unparked,
        shared.config.num_workers - shared.idle.num_sleepers(),
        "unparked count drifted"
    );
    assert!(
        counts.searching <= counts.unparked,
        "more searchers than awake workers"
    );
    let workers = shared.config.num_workers;
    drop(shared);
    realign_registry_round_robin(workers);
}

/// Starts `workers` run loops, spawns one task into `lane` from outside
/// (this thread) while they go to sleep, waits for it to run, then shuts
/// down.
fn spawn_while_workers_go_to_sleep(workers: usize, lane: Lane) {
    let (shared, locals) = crate::runtime::loom_support::shared(workers);
    let loops = start_workers(&shared, locals);
    let ran = Signal::default();
    let task = Raise {
        ran: ran.clone(),
        first: None,
    };
    let handle = match lane {
        Lane::Default => spawn_on(&shared, task),
        lane => spawn_on_lane(&shared, task, lane),
    };
    ran.wait();
    drop(handle);
    shut_down(shared, loops);
}

/// Both workers start with nothing to do and go to sleep (searching,
/// spinning, the re-check, parking) while a thread outside the runtime
/// spawns a task. The task must run before shutdown.
#[test]
fn a_spawn_reaches_one_of_two_workers_going_to_sleep() {
    loom::model(|| spawn_while_workers_go_to_sleep(WORKERS, Lane::Default));
}

/// As above, for a task spawned into the `Latency` lane: its queue is
/// runtime-wide and its schedule path (`Shared::schedule_lane`) makes its
/// own wake. Fails with that path made a no-op (the task never runs: loom
/// reports the deadlock) or with its `notify_parked` removed.
#[test]
fn a_latency_spawn_reaches_one_of_two_workers_going_to_sleep() {
    loom::model(|| spawn_while_workers_go_to_sleep(WORKERS, Lane::Latency));
}

/// Three workers (so two may search at once), as above. Preemption bound
/// 2: three full worker loops at bound 3 do not fit CI's time.
#[test]
fn a_spawn_reaches_one_of_three_workers_going_to_sleep() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| spawn_while_workers_go_to_sleep(3, Lane::Default));
}

/// A task holds its worker (a long poll) until a second task, spawned
/// while the first runs, has run: only the other worker can run it, so the
/// wake-up must reach that worker whatever state it is in.
#[test]
fn work_behind_a_long_poll_reaches_the_sleeping_worker() {
    loom::model(|| {
        let (shared, locals) = crate::runtime::loom_support::shared(WORKERS);
        let workers = start_workers(&shared, locals);
        let (first_ran, second_ran) = (Signal::default(), Signal::default());
        let long = spawn_on(
            &shared,
            Raise {
                ran: first_ran.clone(),
                first: Some(second_ran.clone()),
            },
        );
        // Spawned from outside once the long poll may have begun.
        let second = spawn_on(
            &shared,
            Raise {
                ran: second_ran.clone(),
                first: None,
            },
        );
        first_ran.wait();
        drop((long, second));
        shut_down(shared, workers);
    });
}

/// A task spawns two children on its worker (the worker's context is
/// installed, as on a real worker thread): one ends in the ring, one in
/// the LIFO slot, while the other worker searches, steals from the ring or
/// the slot, and goes to sleep. Each child must run (the task waits for
/// both before shutdown); loom's checks on each task's cell catch one run
/// twice. Fails with the displaced task not pushed back to the ring
/// (`schedule_local` dropping `swap_lifo`'s result: that child never runs).
///
/// Preemption bound 2: at 3 it runs for more than ten minutes.
#[test]
fn tasks_spawned_on_a_worker_run_once_while_the_other_steals() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let (shared, locals) = crate::runtime::loom_support::shared(WORKERS);
        let workers = start_workers(&shared, locals);
        let children_ran = [Signal::default(), Signal::default()];
        let parent = spawn_on(
            &shared,
            SpawnTwo {
                shared: shared.clone(),
                children_ran: children_ran.clone(),
            },
        );
        for ran in &children_ran {
            ran.wait();
        }
        drop(parent);
        shut_down(shared, workers);
    });
}

/// The waker of a timer in the model below: raises its flag when fired.
#[derive(Default)]
struct FiredFlag(loom::sync::atomic::AtomicBool);

impl std::task::Wake for FiredFlag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, loom::sync::atomic::Ordering::Release);
    }
}

/// Polls past the busy worker's next periodic check before it gives up on
/// the timer: the model makes a check come every `MIN_GLOBAL_INTERVAL`
/// ticks (the countdown set to it, and a check target of 1 ns, so every
/// tuning clamps to it), which keeps the model within loom's branch limit.
const BUSY_POLLS: usize = super::MIN_GLOBAL_INTERVAL as usize + 2;

/// A task that keeps its worker busy: its first poll waits until the
/// stalled worker's timer is armed (`armed`), then it yields (so its worker
/// never goes idle, where it would fire every wheel on its way to sleep)
/// until the timer has fired, at most [`BUSY_POLLS`] times. Its output is
/// whether the timer fired while it kept its worker busy.
struct BusyUntilFired {
    armed: Signal,
    fired: std::sync::Arc<FiredFlag>,
    polls: usize,
}

impl Future for BusyUntilFired {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        if self.polls == 0 {
            self.armed.wait();
        }
        if self.fired.0.load(loom::sync::atomic::Ordering::Acquire) {
            return Poll::Ready(true);
        }
        self.polls += 1;
        if self.polls > BUSY_POLLS {
            return Poll::Ready(false);
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Worker 0 is stuck in a poll (its loop never runs in the model: the poll
/// never returns) after arming a due timer on its own wheel, and the
/// monitor has marked it stalled, while worker 1 runs a task that keeps it
/// busy. The timer must fire from worker 1 while it stays busy: at its
/// periodic check (`Wheels::OwnOutsideAndStalled`), not only when it goes
/// idle. Fails with the periodic check firing only its own and the outside
/// wheel (the busy task gives up after [`BUSY_POLLS`] polls with the timer
/// still pending).
#[test]
fn a_timer_on_a_stalled_workers_wheel_fires_from_the_busy_one() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(|| {
        let (shared, mut locals) = crate::runtime::loom_support::shared_with(WORKERS, |config| {
            config.global_check_target_ns = 1
        });
        let busy_local = locals.pop().expect("worker 1's ring");
        let stuck_core = Core::new(0, shared.clone(), locals.pop().expect("worker 0's ring"));
        let busy_core = Core::new(1, shared.clone(), busy_local);
        busy_core
            .ticks_to_global_check
            .set(super::MIN_GLOBAL_INTERVAL);
        let busy_loop = thread::spawn(move || {
            let exit = {
                let _core = crate::runtime::context::set_core(&busy_core);
                busy_core.run()
            };
            assert_eq!(exit, super::RunExit::Shutdown);
            busy_core.close();
        });
        let armed = Signal::default();
        let fired = std::sync::Arc::new(FiredFlag::default());
        let stuck = {
            let (shared, armed, fired) = (shared.clone(), armed.clone(), fired.clone());
            // Worker 0's thread inside its poll: arms on its own wheel, as
            // a `Sleep` polled there does, and never returns; the monitor
            // marks its slot stalled.
            thread::spawn(move || {
                let due_now = shared.time.clock.now_ns();
                let waker = std::task::Waker::from(fired);
                let (_timer, poke) = shared.time.arm(0, due_now, &waker).unwrap();
                shared.poke_timekeeper(poke);
                crate::runtime::scheduler::monitor::mark_stalled(&shared, 0);
                armed.raise();
            })
        };
        let busy = spawn_on(
            &shared,
            BusyUntilFired {
                armed,
                fired,
                polls: 0,
            },
        );
        let fired_while_busy = crate::runtime::loom_support::block_on(busy).unwrap();
        assert!(
            fired_while_busy,
            "the stalled worker's timer waited while the other worker was busy"
        );
        stuck.join().unwrap();
        shut_down(shared, vec![busy_loop]);
        stuck_core.close();
    });
}
