//! Which workers are asleep, which are searching, and whom a new task wakes.
//!
//! # State
//!
//! One word, `state`, packs `num_searching` (high half) and `num_unparked`
//! (low half). Every change is a read-modify-write on that word; the list of
//! sleeping workers sits behind `sleepers`, a mutex, and a worker's membership
//! in it changes only with the lock held *and* `num_unparked` changed in the
//! same critical section. So after all threads settle:
//! `num_unparked == num_workers - sleepers.len()`, and `num_searching <=
//! num_unparked`.
//!
//! # Rules
//!
//! 1. A push wakes a worker only if no worker is searching and one is asleep
//!    (`notify_should_wakeup`). A searcher will find the task; waking a second
//!    one would only add a park/unpark pair.
//! 2. At most half the workers search at once
//!    (`transition_worker_to_searching`), so stealing never hammers every
//!    queue at the same time.
//! 3. A woken worker starts as a searcher (the waker counts it in the same
//!    RMW that counts it unparked).
//! 4. The last searcher to stop searching has a duty: if it found work it
//!    wakes another worker to keep searching. Every worker going to sleep
//!    (not only the last searcher, as in tokio) re-checks every queue
//!    *after* its RMW and a `fence(SeqCst)`: a worker that was not
//!    searching may have looked at the queues before a push whose pusher
//!    saw a searcher and woke nobody, while that searcher's own rule-4 wake
//!    found this worker still awake (the real-worker model
//!    `work_behind_a_long_poll_reaches_the_sleeping_worker` found it; the
//!    task then waited behind the searcher's long poll). Go's scheduler
//!    re-checks every run queue before it sleeps for the same reason.
//!
//! # Why no wake-up is lost (worked race)
//!
//! Spawner S pushes task T, then runs `fence(SeqCst)` and loads `state`.
//! Worker W, going to sleep, decrements `num_unparked` (and
//! `num_searching` if it searched) in one RMW, runs `fence(SeqCst)`, then
//! looks at every queue.
//! The two fences are ordered one way or the other: if S's fence comes first,
//! W's queue check sees T and W wakes a worker (possibly itself); if W's
//! comes first, S's load sees `num_searching == 0` and a sleeper, and S wakes
//! one, unless a worker is still searching: then rule 4 takes over (that
//! searcher, leaving the search, wakes a sleeper; or, going to sleep
//! itself, re-checks). Either way someone runs T. The
//! argument uses fences and RMWs only, both of which loom models (it treats
//! SeqCst *accesses* as AcqRel, but implements SeqCst fences), so
//! `loom_tests.rs` can and does check it: removing either fence makes the
//! model fail. `worker/loom_tests.rs` checks the rules on the real worker.
//!
//! The Acquire/Release orderings on `state` are stronger than this needs:
//! the word publishes only its own counts (the sleeper list is under its
//! mutex, the queues synchronise themselves), and the argument above rests
//! on the RMWs and the two fences. `scripts/orderings.sh` weakens each of
//! them alone (every load and RMW of `state` in this file) and every loom
//! model still passes, while weakening or removing either fence fails
//! (docs/experiments.md#memory-ordering-survey). They are kept as the
//! conventional pairing for a word other threads read.

use crate::util::locks::Mutex;
use crate::util::loom::sync::atomic::{AtomicUsize, Ordering, fence};

const UNPARK_MASK: usize = (1 << SEARCH_SHIFT) - 1;
const SEARCH_SHIFT: u32 = usize::BITS / 2;
const ONE_SEARCHING: usize = 1 << SEARCH_SHIFT;
const ONE_UNPARKED: usize = 1;

pub(crate) struct Idle {
    state: AtomicUsize,
    sleepers: Mutex<Vec<usize>>,
    num_workers: usize,
}

/// A decoded `state` word.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    pub(crate) searching: usize,
    pub(crate) unparked: usize,
}

impl Counts {
    fn of(word: usize) -> Counts {
        Counts {
            searching: word >> SEARCH_SHIFT,
            unparked: word & UNPARK_MASK,
        }
    }
}

/// What a worker that stopped searching must do next.
#[must_use = "the last searcher must wake a worker or re-check the queues"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeftSearching {
    /// Other searchers remain; nothing to do.
    OthersRemain,
    /// This was the last searcher.
    WasLast,
}

impl Idle {
    pub(crate) fn new(num_workers: usize) -> Idle {
        assert!(
            num_workers < UNPARK_MASK,
            "too many workers for the state word"
        );
        Idle {
            state: AtomicUsize::new(num_workers),
            sleepers: Mutex::new(Vec::with_capacity(num_workers)),
            num_workers,
        }
    }

    pub(crate) fn counts(&self) -> Counts {
        Counts::of(self.state.load(Ordering::Acquire))
    }

    /// Rule 1. Called after a task was pushed where other workers can see
    /// it. Returns the worker to unpark, already counted as unparked and
    /// searching.
    pub(crate) fn worker_to_notify(&self) -> Option<usize> {
        // The fence pairs with the one in `Shared::notify_if_work_pending`:
        // see the module doc.
        fence(Ordering::SeqCst);
        if !self.should_wake() {
            return None;
        }
        self.wake_one_locked()
    }

    #[cold]
    fn wake_one_locked(&self) -> Option<usize> {
        let mut sleepers = self.sleepers.lock().unwrap();
        // Re-check under the lock: another notifier may have woken the last
        // sleeper, or a worker may have started searching.
        if !self.should_wake() {
            return None;
        }
        let worker = sleepers.pop()?;
        // (Mutation testing: `^` for `|` survives, and is the same value:
        // the two bits are disjoint.)
        self.state
            .fetch_add(ONE_SEARCHING | ONE_UNPARKED, Ordering::AcqRel);
        Some(worker)
    }

    /// Rule 1's test. It only saves wake-ups: waking a sleeper although a
    /// searcher exists is correct, just churn (which the benchmark lane's
    /// context switches per iteration show), so the mutant "always true"
    /// survives every test and model, by design, and so do its weaker
    /// forms (`||` for `&&`, `<=` for `<`: with every worker awake the
    /// sleeper list is empty and `wake_one_locked` finds nobody to wake).
    #[inline]
    fn should_wake(&self) -> bool {
        let counts = Counts::of(self.state.load(Ordering::Acquire));
        counts.searching == 0 && counts.unparked < self.num_workers
    }

    /// Rule 4, second half: a worker already registered as asleep (every
    /// one, not only the last searcher) re-checks for work. `work_pending` must read every queue a
    /// task could have been pushed to. Returns the worker to unpark.
    pub(crate) fn recheck_before_sleep(
        &self,
        work_pending: impl FnOnce() -> bool,
    ) -> Option<usize> {
        // Pairs with the fence in `worker_to_notify`: see the module doc.
        fence(Ordering::SeqCst);
        if work_pending() {
            self.worker_to_notify()
        } else {
            None
        }
    }

    /// Rule 2. Returns whether the worker may search.
    pub(crate) fn transition_worker_to_searching(&self) -> bool {
        let counts = self.counts();
        if 2 * counts.searching >= self.num_workers {
            return false;
        }
        // Racy by design: two workers may pass the check together and the
        // bound be exceeded by one for a moment; the count itself stays exact.
        self.state.fetch_add(ONE_SEARCHING, Ordering::AcqRel);
        true
    }

    /// Rule 4, first half: a searcher found work.
    pub(crate) fn transition_worker_from_searching(&self) -> LeftSearching {
        let prev = Counts::of(self.state.fetch_sub(ONE_SEARCHING, Ordering::AcqRel));
        debug_assert!(prev.searching > 0);
        if prev.searching == 1 {
            LeftSearching::WasLast
        } else {
            LeftSearching::OthersRemain
        }
    }

    /// Registers `worker` as asleep. The caller must then re-check the
    /// queues (rule 4), whether or not it was the last searcher.
    pub(crate) fn transition_worker_to_parked(&self, worker: usize, searching: bool) {
        let mut sleepers = self.sleepers.lock().unwrap();
        // (`^` for `|` survives mutation testing: disjoint bits, the same
        // value.)
        let dec = ONE_UNPARKED | if searching { ONE_SEARCHING } else { 0 };
        let prev = Counts::of(self.state.fetch_sub(dec, Ordering::AcqRel));
        debug_assert!(!searching || prev.searching > 0);
        sleepers.push(worker);
    }

    /// Whether `worker` is still on the sleeper list (it was not chosen by a
    /// notifier, so a wake-up it saw was spurious or a shutdown).
    pub(crate) fn is_parked(&self, worker: usize) -> bool {
        self.sleepers.lock().unwrap().contains(&worker)
    }

    /// A sleeping worker other than `me`, if any (the most recent sleeper:
    /// its caches are the warmest). A hint: it may wake meanwhile.
    ///
    /// Only the I/O path calls it (`Core::hand_over_poller`), which loom
    /// does not build: pinned by `tests/net.rs`'s
    /// `readiness_is_not_stuck_behind_the_long_poll_of_the_task_it_woke_first`,
    /// though not fully: an answer of always `Some(0)` is right whenever
    /// worker 1 keeps time (worker 0 is then the other sleeper), and that
    /// test does not choose which worker keeps time.
    pub(crate) fn any_sleeper_except(&self, me: usize) -> Option<usize> {
        self.sleepers
            .lock()
            .unwrap()
            .iter()
            .rev()
            .copied()
            .find(|&w| w != me)
    }

    /// Takes `worker` off the sleeper list on its own initiative (it has work
    /// or the runtime is shutting down). Returns false when a notifier had
    /// already taken it off (and counted it as searching).
    pub(crate) fn unpark_worker_by_id(&self, worker: usize) -> bool {
        let mut sleepers = self.sleepers.lock().unwrap();
        match sleepers.iter().position(|&w| w == worker) {
            Some(at) => {
                sleepers.swap_remove(at);
                self.state.fetch_add(ONE_UNPARKED, Ordering::AcqRel);
                true
            }
            None => false,
        }
    }

    /// Number of sleeping workers (for the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn num_sleepers(&self) -> usize {
        self.sleepers.lock().unwrap().len()
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
