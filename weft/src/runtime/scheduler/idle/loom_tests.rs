//! loom models of the fence-against-fence handshake of `idle.rs` with a
//! lock-free queue.
//!
//! The worker loop itself is checked on the real code in
//! `worker/loom_tests.rs`; there, though, the inject queue is loom's
//! `Mutex<VecDeque>` (crossbeam's lock-free injector is not loom-aware), and
//! the mutex alone orders a push against a re-check, so deleting a fence
//! does not fail those models. Here the queue is a counter behind an atomic,
//! as lock-free as crossbeam's, and the parking steps are `Core::park`'s
//! (register asleep, re-check, sleep; every parker re-checks) written out
//! over it: the one place they are repeated, kept to check the fences.
//!
//! Workers and a spawner run the real `Idle` transitions and the real
//! `Parker`. A model passes
//! only if the pushed task is run (a lost wake-up leaves every thread
//! parked, which loom reports as a deadlock) and, after all threads settle,
//! `unparked == workers - sleepers` and `searching <= unparked`.
//!
//! Orderings relied on: the spawner's push, then `fence(SeqCst)` in
//! `worker_to_notify`; the last searcher's RMW on the state word, then
//! `fence(SeqCst)` in `recheck_before_sleep`, then its queue check.
//! loom implements SeqCst fences (it only weakens SeqCst *accesses* to
//! AcqRel), so the fence-fence argument in `idle.rs` is what is checked
//! here; deleting either fence makes these models fail.
//!
//! `searcher_that_found_work_hands_on_later_pushes` checks rule 4 after a
//! successful search (no task left behind a long poll while a worker
//! sleeps). Checked by breaking it: without the wake-up, loom reports the
//! sleeper deadlocked.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p weft --lib --release idle`

use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::thread;

use super::{Idle, LeftSearching};
use crate::runtime::scheduler::park::Parker;

struct World {
    idle: Idle,
    parkers: Vec<Parker>,
    /// Tasks pushed and not yet taken.
    queued: AtomicUsize,
    /// Tasks run.
    ran: AtomicUsize,
    done: AtomicBool,
}

impl World {
    fn new(workers: usize) -> Arc<World> {
        Arc::new(World {
            idle: Idle::new(workers),
            parkers: (0..workers).map(|_| Parker::new()).collect(),
            queued: AtomicUsize::new(0),
            ran: AtomicUsize::new(0),
            done: AtomicBool::new(false),
        })
    }

    fn unpark(&self, worker: Option<usize>) {
        if let Some(worker) = worker {
            let _ = self.parkers[worker].unpark();
        }
    }

    /// The spawner: push, then notify.
    fn spawn_task(&self) {
        self.queued.fetch_add(1, Ordering::Release);
        self.unpark(self.idle.worker_to_notify());
    }

    fn try_take(&self) -> bool {
        let mut n = self.queued.load(Ordering::Acquire);
        while n > 0 {
            match self
                .queued
                .compare_exchange(n, n - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(actual) => n = actual,
            }
        }
        false
    }

    /// A worker that has just found no work (`asleep`: or is already
    /// registered as sleeping): sleep following the protocol, run the task
    /// if chosen, return once the task has run.
    fn worker(&self, me: usize, mut searching: bool, mut asleep: bool) {
        loop {
            if !asleep {
                // As `Core::park`: every parker re-checks.
                self.idle.transition_worker_to_parked(me, searching);
                let work = || self.queued.load(Ordering::Acquire) > 0;
                self.unpark(self.idle.recheck_before_sleep(work));
            }
            asleep = false;
            loop {
                if self.done.load(Ordering::Acquire) {
                    return;
                }
                self.parkers[me].park();
                if !self.idle.is_parked(me) {
                    break; // chosen by a notifier: searching now
                }
            }
            searching = true;
            if self.try_take() {
                self.ran.fetch_add(1, Ordering::AcqRel);
                if self.idle.transition_worker_from_searching() == LeftSearching::WasLast {
                    self.unpark(self.idle.worker_to_notify());
                }
                self.done.store(true, Ordering::Release);
                for parker in &self.parkers {
                    let _ = parker.unpark();
                }
                return;
            }
        }
    }

    fn assert_settled(&self, workers: usize) {
        assert_eq!(
            self.ran.load(Ordering::Acquire),
            1,
            "the task must run exactly once"
        );
        let counts = self.idle.counts();
        assert_eq!(
            counts.unparked,
            workers - self.idle.num_sleepers(),
            "unparked count drifted"
        );
        assert!(
            counts.searching <= counts.unparked,
            "more searchers than awake workers"
        );
    }
}

fn run_workers(world: &Arc<World>, workers: &[(usize, bool, bool)]) {
    let handles: Vec<_> = workers
        .iter()
        .map(|&(me, searching, asleep)| {
            let world = world.clone();
            thread::spawn(move || world.worker(me, searching, asleep))
        })
        .collect();
    world.spawn_task();
    for handle in handles {
        handle.join().unwrap();
    }
}

/// A worker leaves the searching state (and parks) while a spawner decides
/// whom to wake.
#[test]
fn last_searcher_parks_while_spawner_notifies() {
    loom::model(|| {
        let world = World::new(2);
        // Worker 1 is asleep already; worker 0 is the only searcher.
        world.idle.transition_worker_to_parked(1, false);
        assert!(world.idle.transition_worker_to_searching());
        run_workers(&world, &[(0, true, false), (1, false, true)]);
        world.assert_settled(2);
    });
}

/// Two workers leave the searching state at once while a spawner wakes one
/// (three workers, so the half-of-workers bound admits two searchers).
#[test]
fn two_searchers_park_while_spawner_notifies() {
    loom::model(|| {
        let world = World::new(3);
        world.idle.transition_worker_to_parked(2, false);
        assert!(world.idle.transition_worker_to_searching());
        assert!(world.idle.transition_worker_to_searching());
        assert!(
            !world.idle.transition_worker_to_searching(),
            "at most half search"
        );
        run_workers(
            &world,
            &[(0, true, false), (1, true, false), (2, false, true)],
        );
        world.assert_settled(3);
    });
}

/// Rule 4 after a search that found work: the last searcher takes a task
/// and then never looks at a queue again (its task is a long poll), while
/// a spawner pushes a second task and, seeing the searcher, may not wake
/// anyone. The second task must still reach the sleeping worker: if neither
/// the spawner nor the searcher's rule-4 wake-up reaches it, it sleeps
/// forever and loom reports the deadlock.
#[test]
fn searcher_that_found_work_hands_on_later_pushes() {
    loom::model(|| {
        let world = World::new(2);
        world.idle.transition_worker_to_parked(1, false);
        assert!(world.idle.transition_worker_to_searching());
        world.queued.store(1, Ordering::Release);

        let long_poller = {
            let world = world.clone();
            thread::spawn(move || {
                assert!(world.try_take(), "the first task is there from the start");
                if world.idle.transition_worker_from_searching() == LeftSearching::WasLast {
                    world.unpark(world.idle.worker_to_notify());
                }
                // Stuck in the task's poll from here on.
            })
        };
        let sleeper = {
            let world = world.clone();
            thread::spawn(move || world.worker(1, false, true))
        };
        world.spawn_task();
        long_poller.join().unwrap();
        sleeper.join().unwrap();
        assert_eq!(
            world.ran.load(Ordering::Acquire),
            1,
            "the sleeper ran the second task"
        );
        let counts = world.idle.counts();
        assert_eq!(counts.unparked, 2, "both workers end awake");
        assert_eq!(counts.searching, 0);
    });
}
