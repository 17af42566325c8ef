//! loom models of a `JoinSet` racing its members' tasks: `join_next`
//! against completions, against an abort through an `AbortHandle` from
//! another thread, `abort_all` against a completion, and the set's drop
//! against a completion; and the drop of a `JoinHandle` (or a set) whose
//! `AbortHandle` lives on against its task's completion and an abort
//! through that `AbortHandle` (the reaper of `join/cell.rs`).
//!
//! The members are real weft task cells on the cell's test scheduler
//! (`loom_support::TestScheduler`: a queue, no runtime): a "runner" thread
//! plays the worker, running what that queue holds (as in `join/loom_tests.rs`, which says what loom sees of
//! async-task and how `RacePoint` makes it try the orders of async-task's
//! transitions). Here loom also sees the set's ready list (its mutex and
//! each member's `queued` flag) and each handle's cell (its mutex): the
//! protocols of `join_set/ready.rs` and `join/cell.rs`.
//!
//! # What is asserted
//!
//! - `join_next` returns every member exactly once, then `None`, and never
//!   waits forever (a lost wake of a member or of the waiting `join_next`
//!   is a deadlock loom reports).
//! - Members are returned in the order their tasks completed.
//! - Each task's future is dropped exactly once, and each output produced
//!   is dropped exactly once (by whoever ends up with it).
//! - `Ok` only for a task that completed; an aborted task that never
//!   completed is returned as cancelled.
//! - Once the owner (a `JoinHandle` or the set) is dropped and the task has
//!   ended, its output is already dropped, exactly once, though an
//!   `AbortHandle` is still alive; and that `AbortHandle` says the task
//!   finished.
//!
//! Bound: `LOOM_MAX_PREEMPTIONS=3` (scripts/loom.sh).

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex as StdMutex;
use std::task::{Context, Poll};

use loom::sync::Arc;
use loom::thread;

use super::JoinSet;
use crate::runtime::loom_support::realign_registry_round_robin;
use crate::runtime::loom_support::{Count, DropProbe, RacePoint, TestScheduler, spawn_on};
use crate::task::JoinError;

const WORKERS: usize = 1;

#[derive(Clone, Default)]
struct Log {
    future_drops: Count,
    output_drops: Count,
    completions: Count,
    /// Member ids in the order their futures returned `Ready`.
    completed: std::sync::Arc<StdMutex<Vec<usize>>>,
}

/// A member's output: its id; counts its own drops.
struct Output(usize, #[allow(dead_code)] DropProbe);

/// Yields `yields` times (waking itself), then completes with its id; or,
/// with `yields == usize::MAX`, stays pending with nobody to wake it.
struct Member {
    id: usize,
    yields: usize,
    polls: usize,
    log: Log,
    race: RacePoint,
    _drop: DropProbe,
}

const NEVER: usize = usize::MAX;

impl Member {
    fn new(id: usize, yields: usize, log: &Log, race: &RacePoint) -> Member {
        Member {
            id,
            yields,
            polls: 0,
            log: log.clone(),
            race: race.clone(),
            _drop: DropProbe(log.future_drops.clone()),
        }
    }
}

impl Future for Member {
    type Output = Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Output> {
        self.race.touch();
        self.polls += 1;
        if self.yields == NEVER {
            return Poll::Pending;
        }
        if self.polls <= self.yields {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.log.completions.incr();
        self.log.completed.lock().unwrap().push(self.id);
        Poll::Ready(Output(self.id, DropProbe(self.log.output_drops.clone())))
    }
}

/// Runs what the test scheduler's queue holds until it is empty.
fn run_queued(scheduler: &TestScheduler) {
    while let Some(task) = scheduler.pop() {
        task.run();
    }
}

fn spawn_runner(scheduler: &Arc<TestScheduler>) -> thread::JoinHandle<()> {
    let scheduler = scheduler.clone();
    thread::spawn(move || run_queued(&scheduler))
}

fn add(
    set: &mut JoinSet<Output>,
    scheduler: &Arc<TestScheduler>,
    member: Member,
) -> crate::task::AbortHandle {
    set.insert(spawn_on(scheduler, member))
}

/// Runs `future` to completion on this thread, which also runs queued
/// tasks while the future is pending, as a worker of a one-thread runtime
/// would: an abort an `AbortHandle` left to the set's own poll (the cell
/// was busy) is requested there, and the task it schedules must be run by
/// someone. Parks (loom's park: a lost wake is a reported deadlock) when
/// nothing is queued and nothing woke it.
///
/// The flag is needed for wakes made by this thread itself (a task run
/// here completing wakes the set's member, which wakes this thread): loom
/// forgets a thread's pending unpark once that thread does other loom
/// operations before it parks.
fn block_on_running<F: Future>(scheduler: &TestScheduler, future: F) -> F::Output {
    struct Unpark {
        thread: loom::thread::Thread,
        woken: std::sync::atomic::AtomicBool,
    }

    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.woken.store(true, std::sync::atomic::Ordering::SeqCst);
            self.thread.unpark();
        }
    }

    let unpark = std::sync::Arc::new(Unpark {
        thread: thread::current(),
        woken: std::sync::atomic::AtomicBool::new(false),
    });
    let waker = std::task::Waker::from(unpark.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        run_queued(scheduler);
        // No loom operation between this swap and the park: a wake from
        // another thread in between leaves an unpark the park consumes.
        if !unpark
            .woken
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            thread::park();
        }
    }
}

/// Joins every member on this thread, in the order `join_next` returns
/// them; running queued tasks meanwhile if `scheduler` is given.
fn join_all(
    scheduler: Option<&TestScheduler>,
    set: &mut JoinSet<Output>,
) -> Vec<Result<Output, JoinError>> {
    let mut results = Vec::new();
    loop {
        let next = match scheduler {
            Some(scheduler) => block_on_running(scheduler, set.join_next()),
            None => crate::runtime::loom_support::block_on(set.join_next()),
        };
        let Some(result) = next else { break };
        results.push(result);
    }
    assert!(set.is_empty());
    results
}

/// The checks once every thread is done.
fn assert_accounted(log: &Log, members: usize, results: Vec<Result<Output, JoinError>>) {
    assert_eq!(log.future_drops.get(), members, "each future dropped once");
    for result in results {
        match result {
            Ok(output) => drop(output),
            Err(error) => assert!(error.is_cancelled(), "{error}"),
        }
    }
    assert_eq!(
        log.output_drops.get(),
        log.completions.get(),
        "each output produced is dropped once"
    );
}

fn finish(scheduler: Arc<TestScheduler>) {
    run_queued(&scheduler);
    assert!(scheduler.is_empty(), "a Runnable left in the queue");
    drop(scheduler);
    realign_registry_round_robin(WORKERS);
}

/// Two members, one completing after a yield, one at its first poll; the
/// runner completes them while this thread waits in `join_next`. Both are
/// returned, in the order they completed.
#[test]
fn join_next_races_completions() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let mut set = JoinSet::new();
        add(&mut set, &scheduler, Member::new(0, 1, &log, &race));
        add(&mut set, &scheduler, Member::new(1, 0, &log, &race));
        let runner = spawn_runner(&scheduler);
        race.touch();
        // Only the runner runs tasks: its completions are one after the
        // other, so the order they are recorded in is the order async-task
        // marks them complete and wakes their members.
        let results = join_all(None, &mut set);
        runner.join().unwrap();
        let order: Vec<usize> = results
            .iter()
            .map(|result| result.as_ref().expect("nothing aborted").0)
            .collect();
        assert_eq!(order, *log.completed.lock().unwrap(), "completion order");
        assert_accounted(&log, 2, results);
        finish(scheduler);
    });
}

/// A thread that aborts through `abort`, asks whether the task finished,
/// runs what its abort queued (as a worker would) and asks again; it
/// returns `abort`.
fn spawn_aborter(
    scheduler: &Arc<TestScheduler>,
    race: &RacePoint,
    abort: crate::task::AbortHandle,
) -> thread::JoinHandle<crate::task::AbortHandle> {
    let (scheduler, race) = (scheduler.clone(), race.clone());
    thread::spawn(move || {
        race.touch();
        abort.abort();
        race.touch();
        let _ = abort.is_finished();
        run_queued(&scheduler);
        let _ = abort.is_finished();
        abort
    })
}

/// An `AbortHandle` on another thread aborts a member while the runner
/// polls it and this thread waits in `join_next`, then asks whether it
/// finished (a poll of the aborting task with the set's waker, which must
/// neither replace that waker nor swallow its wake): the cell's protocol
/// and the ready list's. The aborter runs what its abort queued, as a
/// worker would.
fn abort_handle_races_join_next(yields: usize) {
    let scheduler = TestScheduler::new(WORKERS);
    let log = Log::default();
    let race = RacePoint::new();
    let mut set = JoinSet::new();
    let abort = add(&mut set, &scheduler, Member::new(0, yields, &log, &race));
    let runner = spawn_runner(&scheduler);
    let aborter = spawn_aborter(&scheduler, &race, abort);
    let results = join_all(Some(&scheduler), &mut set);
    runner.join().unwrap();
    let abort = aborter.join().unwrap();
    assert!(abort.is_finished(), "joined, but not finished");
    assert_eq!(results.len(), 1);
    if yields == NEVER {
        assert!(results[0].is_err(), "a task that never completes was Ok");
    }
    assert_accounted(&log, 1, results);
    finish(scheduler);
}

#[test]
fn an_abort_handle_races_join_next_on_an_idle_task() {
    loom::model(|| abort_handle_races_join_next(NEVER));
}

#[test]
fn an_abort_handle_races_join_next_and_a_completion() {
    loom::model(|| abort_handle_races_join_next(1));
}

/// An `AbortHandle` aborts an idle task while its `JoinHandle` is polled
/// by its owner (this thread): an abort that finds the cell busy with the
/// owner's poll is left to that poll, which requests it before it puts
/// the task back. The handle resolves as cancelled.
#[test]
fn an_abort_handle_races_the_owners_poll() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let handle = spawn_on(&scheduler, Member::new(0, NEVER, &log, &race));
        let abort = handle.abort_handle();
        let runner = spawn_runner(&scheduler);
        let aborter = {
            let (scheduler, race) = (scheduler.clone(), race.clone());
            thread::spawn(move || {
                race.touch();
                abort.abort();
                race.touch();
                run_queued(&scheduler);
                abort
            })
        };
        race.touch();
        let result = block_on_running(&scheduler, handle);
        runner.join().unwrap();
        let abort = aborter.join().unwrap();
        assert!(result.is_err(), "a task that never completes was Ok");
        assert!(abort.is_finished());
        assert_accounted(&log, 1, vec![result]);
        finish(scheduler);
    });
}

/// `abort_all` on this thread while the runner completes one member
/// (after a yield) and the other waits forever; then `join_next` gives the
/// first's output or its cancellation, and the second's cancellation.
#[test]
fn abort_all_races_a_completion() {
    loom::model(|| {
        let scheduler = TestScheduler::new(WORKERS);
        let log = Log::default();
        let race = RacePoint::new();
        let mut set = JoinSet::new();
        add(&mut set, &scheduler, Member::new(0, 1, &log, &race));
        add(&mut set, &scheduler, Member::new(1, NEVER, &log, &race));
        let runner = spawn_runner(&scheduler);
        race.touch();
        set.abort_all();
        race.touch();
        // What the abort queued (an idle task is scheduled to be dropped).
        run_queued(&scheduler);
        let results = join_all(Some(&scheduler), &mut set);
        runner.join().unwrap();
        assert_eq!(results.len(), 2);
        assert_accounted(&log, 2, results);
        finish(scheduler);
    });
}

/// The set is dropped while the runner completes one member and the other
/// waits forever: each task is aborted or its output dropped, exactly once
/// either way; and before their `AbortHandle`s are dropped if
/// `keep_aborts` (the set's drop then gives each cell a reaper).
fn the_sets_drop_races_a_completion(keep_aborts: bool) {
    let scheduler = TestScheduler::new(WORKERS);
    let log = Log::default();
    let race = RacePoint::new();
    let mut set = JoinSet::new();
    let mut aborts = vec![
        add(&mut set, &scheduler, Member::new(0, 1, &log, &race)),
        add(&mut set, &scheduler, Member::new(1, NEVER, &log, &race)),
    ];
    if !keep_aborts {
        aborts.clear();
    }
    let runner = spawn_runner(&scheduler);
    race.touch();
    drop(set);
    race.touch();
    runner.join().unwrap();
    run_queued(&scheduler);
    assert_accounted(&log, 2, Vec::new());
    assert!(aborts.iter().all(|abort| abort.is_finished()));
    drop(aborts);
    finish(scheduler);
}

#[test]
fn dropping_the_set_races_a_completion() {
    loom::model(|| the_sets_drop_races_a_completion(false));
}

#[test]
fn dropping_the_set_races_a_completion_with_abort_handles_alive() {
    loom::model(|| the_sets_drop_races_a_completion(true));
}

/// A `JoinHandle` is dropped on this thread while the runner completes its
/// task (after a yield), and, if `abort`, while an `AbortHandle` on a third
/// thread aborts it (`spawn_aborter`). Once every thread is done, the output of a
/// task that completed is already dropped, exactly once, though the
/// `AbortHandle` is alive: the handle's reaper was woken by the
/// completion, by the abort's notify, or by whoever put the task back in
/// the cell, or found the output at the handle's drop.
fn dropping_the_owner_races_a_completion(abort: bool) {
    let scheduler = TestScheduler::new(WORKERS);
    let log = Log::default();
    let race = RacePoint::new();
    let handle = spawn_on(&scheduler, Member::new(0, 1, &log, &race));
    let kept = handle.abort_handle();
    let runner = spawn_runner(&scheduler);
    let aborter = abort.then(|| spawn_aborter(&scheduler, &race, handle.abort_handle()));
    race.touch();
    drop(handle);
    race.touch();
    runner.join().unwrap();
    let other = aborter.map(|aborter| aborter.join().unwrap());
    run_queued(&scheduler);
    assert_accounted(&log, 1, Vec::new());
    if !abort {
        assert_eq!(log.completions.get(), 1, "nothing aborted the task");
    }
    assert!(
        kept.is_finished(),
        "the task ended, its AbortHandle says not"
    );
    drop((kept, other));
    finish(scheduler);
}

#[test]
fn dropping_the_owner_with_an_abort_handle_races_a_completion() {
    loom::model(|| dropping_the_owner_races_a_completion(false));
}

#[test]
fn dropping_the_owner_with_an_abort_handle_races_a_completion_and_an_abort() {
    loom::model(|| dropping_the_owner_races_a_completion(true));
}
