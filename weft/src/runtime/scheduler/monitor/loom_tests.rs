//! loom model of the handoff: a spare thread drains a stalled worker's
//! queue while that worker, still inside its poll, pushes onto it and then
//! returns to its loop.
//!
//! The code that runs: the stuck worker's `Core::schedule_local` (LIFO
//! slot, displaced task to the ring) and `Core::run` after the poll; the
//! spare's `Core::run_spare` on a spare slot (`rescue_stalled`, its own
//! `next_task`, `steal_work`), with the slot marked stalled as the monitor
//! marks it. The monitor's own sampling is timing, not a protocol, and is
//! left out.
//!
//! Invariants asserted: each task runs exactly once (a second run fails
//! the task's own check; a lost task leaves the model waiting for it, which
//! loom reports as a deadlock), all before shutdown begins; each ring has
//! one owner throughout (the stuck thread keeps its `Local`; the spare owns
//! the spare slot's; loom's cell checks would report two owners' accesses
//! as a race).
//!
//! The two tasks are spawned inside the stuck poll, after the spare may
//! have started, so the spare polls tasks only the stuck thread has written:
//! loom checks that the LIFO slot and the ring publish them
//! (`TaskMeta::check_published`).
//!
//! Shown to fail with the protocol broken on purpose: a LIFO take made of a
//! load and a separate store (so the stuck worker and the spare can both
//! take the same task) fails the run-once check; the LIFO slot's `AcqRel`
//! swap made `Acquire` or `Release` fails the publication check.
//!
//! Its companion `a_spare_runs_what_a_stuck_poll_waits_for` checks the
//! handoff's purpose: the stuck poll waits until the two tasks it queued
//! (one in the LIFO slot, one in the ring) have run, so only the spare can
//! run them, and a spare that runs nothing deadlocks the model. Fails with
//! `Core::run_spare`'s loop condition turned around (which the first
//! model cannot see: there the worker runs the tasks after its poll).
//!
//! Second model: the monitor's sleep handshake. The monitor, finding every
//! worker parked, goes to sleep (`Monitor::sleep_until_a_worker_wakes`)
//! while a notifier wakes a worker for new work (`Idle::worker_to_notify`)
//! and the worker tells the monitor (`Monitor::worker_woke`). A monitor
//! that sleeps through it would leave that worker unwatched: loom reports
//! the model's thread left waiting on the condvar as a deadlock (loom's
//! `wait_timeout` never times out). Fails with either `SeqCst` fence of
//! the handshake removed. Its companion
//! `a_worker_woken_for_new_work_wakes_the_sleeping_monitor` runs the worker's
//! side through the real `Core::run` (park, woken by a spawn from outside,
//! `worker_woke`), its task held until the monitor has looked; fails with
//! `Core::run` telling the monitor after a wake that is *not* a notifier's
//! (which no other model tells).
//!
//! Third model: the hand-back handshake. A demoted thread, its poll over,
//! gives its worker core back (`Monitor::hand_back`: a lock-free push,
//! then a look at `closed`) while shutdown begins (`Monitor::begin_shutdown`:
//! `closed` set, then the queue drained). The core holds a queued task;
//! by the time both calls have returned the core must have been closed
//! exactly once (its task dropped once), checked *before* `shutdown_drain`,
//! which would drop the task through the registry and hide a core left in
//! the queue. Fails with `hand_back`'s look at `closed` removed and with
//! `begin_shutdown`'s drain removed (checked). It cannot judge the two
//! fences (removed, it passes): under loom the queue is a
//! `Mutex<VecDeque>` (`inject.rs`), whose lock alone orders the push
//! against the drain. The same fence pattern in `schedule_remote` against
//! shutdown is checked on a lock-free replica of the queue
//! (`scheduler::loom_tests::shutdown_handshake_with_a_lock_free_queue`).
//!
//! Fourth: the count of spares woken and not yet back (`woken_spares`).
//! Two spares run the real `run_spare` (one idle, one on its way) while
//! the monitor lends the one spare slot (`hand_off`) twice: a spare woken
//! for a slot the other took first must not stay counted as coming, or the
//! second stall's slot is lent with no spare woken for it. Fails with
//! `run_spare` counting a woken spare back only when it finds something to
//! take.
//!
//! Last, one thread and no interleaving: a spare thread that cannot be
//! started is taken back from every count (`start_spares`' and
//! `hand_off`'s failure paths, which no other model or test reaches). And the
//! spawner thread's side (`run_spawner`) against shutdown: every thread
//! asked of it and never started, its start failed or shutdown came
//! first, is taken back, whatever the order.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

use crate::runtime::loom_support::{Count, DropProbe, Raise, Signal, spawn_on};
use crate::runtime::loom_support::{
    realign_registry_round_robin, shared_with_monitor, shared_with_monitor_and_spares,
    shared_with_spares,
};
use crate::runtime::scheduler::monitor::{HandBack, run_spawner};
use crate::runtime::scheduler::worker::Core;
use crate::runtime::task::{JoinHandle, SpawnOptions, new_task};

/// A task that counts its runs (at most one) and raises `ran`.
struct RunOnce {
    runs: Arc<AtomicUsize>,
    ran: Signal,
}

impl Future for RunOnce {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let before = self.runs.fetch_add(1, Ordering::Relaxed);
        assert_eq!(before, 0, "a task ran twice");
        self.ran.raise();
        Poll::Ready(())
    }
}

/// From inside the poll running on `core`: spawns A and then B, each a
/// [`RunOnce`] counting into `runs[i]` and raising `ran[i]`. A goes to the
/// LIFO slot, then B takes it and moves A to the ring. Returns their
/// handles.
fn queue_two(
    shared: &Arc<crate::runtime::scheduler::Shared>,
    core: &Core,
    runs: [Arc<AtomicUsize>; 2],
    ran: [Signal; 2],
) -> (JoinHandle<()>, JoinHandle<()>) {
    let options = SpawnOptions::plain(std::panic::Location::caller());
    let mut joins = runs.into_iter().zip(ran).map(|(runs, ran)| {
        let (task, join) = new_task(shared, RunOnce { runs, ran }, options);
        core.schedule_local(task, false);
        join
    });
    let join_a = joins.next().unwrap();
    (join_a, joins.next().unwrap())
}

#[test]
fn a_spare_drains_a_stalled_worker_that_returns_from_its_poll() {
    loom::model(|| {
        let (shared, mut locals) = shared_with_spares(1, 1);
        let spare_local = locals.pop().unwrap();
        let worker_local = locals.pop().unwrap();
        crate::runtime::scheduler::monitor::mark_stalled(&shared, 0);

        let (a_ran, b_ran) = (Signal::default(), Signal::default());
        let runs = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];

        let poll_began = Signal::default();
        let worker = {
            let (shared, poll_began) = (shared.clone(), poll_began.clone());
            let (runs, a_ran, b_ran) = (runs.clone(), a_ran.clone(), b_ran.clone());
            thread::spawn(move || {
                let core = Core::new(0, shared.clone(), worker_local);
                // Inside the stuck poll (the spare may start now): the
                // running task spawns two others, A into the LIFO slot, then
                // B, which moves A to the ring. Both are made here, after
                // the spare may have started: it then polls tasks whose
                // memory only this thread wrote, and loom checks that the
                // LIFO slot and the ring publish them
                // (`TaskMeta::check_published`).
                poll_began.raise();
                let (join_a, join_b) = queue_two(&shared, &core, runs, [a_ran, b_ran]);
                // The poll returns: the worker's ordinary loop.
                assert_eq!(
                    core.run(),
                    crate::runtime::scheduler::worker::RunExit::Shutdown
                );
                core.close();
                (join_a, join_b)
            })
        };
        let spare = {
            let shared = shared.clone();
            thread::spawn(move || {
                // The monitor lends the slot once the poll has stalled:
                // here as soon as it began, so the spare may find the
                // stuck worker's queue empty, half filled or full.
                poll_began.wait();
                let core = Core::new(1, shared, spare_local);
                core.run_spare();
            })
        };

        a_ran.wait();
        b_ran.wait();
        spare.join().unwrap();
        shared.begin_shutdown();
        let (join_a, join_b) = worker.join().unwrap();
        shared.shutdown_drain();
        for runs in &runs {
            assert_eq!(runs.load(Ordering::Relaxed), 1);
        }
        drop((join_a, join_b));
        drop(shared);
        realign_registry_round_robin(1);
    });
}

#[test]
fn a_spare_runs_what_a_stuck_poll_waits_for() {
    // The handoff's purpose, where the model above checks its safety: the
    // stuck poll does not return until the two tasks it queued have run,
    // so only the spare can run them (in the model above the worker runs
    // them itself after its poll, and a spare that did nothing passed).
    loom::model(|| {
        let (shared, mut locals) = shared_with_spares(1, 1);
        let spare_local = locals.pop().unwrap();
        let worker_local = locals.pop().unwrap();
        crate::runtime::scheduler::monitor::mark_stalled(&shared, 0);

        let (a_ran, b_ran) = (Signal::default(), Signal::default());
        let runs = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
        let queued = Signal::default();
        let worker = {
            let (shared, queued) = (shared.clone(), queued.clone());
            let (runs, a_ran, b_ran) = (runs.clone(), a_ran.clone(), b_ran.clone());
            thread::spawn(move || {
                let core = Core::new(0, shared.clone(), worker_local);
                let ran = [a_ran.clone(), b_ran.clone()];
                let (join_a, join_b) = queue_two(&shared, &core, runs, ran);
                // The monitor lends the slot once the poll has stalled
                // with work queued behind it.
                queued.raise();
                // Stuck: the poll waits for both (a deadlock if the spare
                // does not run them).
                a_ran.wait();
                b_ran.wait();
                assert_eq!(
                    core.run(),
                    crate::runtime::scheduler::worker::RunExit::Shutdown
                );
                core.close();
                (join_a, join_b)
            })
        };
        queued.wait();
        let spare = Core::new(1, shared.clone(), spare_local);
        spare.run_spare();
        drop(spare);
        shared.begin_shutdown();
        let (join_a, join_b) = worker.join().unwrap();
        shared.shutdown_drain();
        for runs in &runs {
            assert_eq!(runs.load(Ordering::Relaxed), 1);
        }
        drop((join_a, join_b));
        drop(shared);
        realign_registry_round_robin(1);
    });
}

#[test]
fn a_worker_woken_as_the_monitor_goes_to_sleep_wakes_it() {
    loom::model(|| {
        let (shared, _locals) = shared_with_monitor(1);
        // The only worker is asleep: nobody is busy.
        shared.idle.transition_worker_to_parked(0, false);
        let wake = {
            let shared = shared.clone();
            thread::spawn(move || {
                // New work: a notifier counts the worker awake and wakes
                // it; the worker, out of its park, tells the monitor.
                assert_eq!(shared.idle.worker_to_notify(), Some(0));
                shared.monitor.worker_woke();
            })
        };
        let monitor = &shared.monitor;
        let state = monitor.lock();
        if shared.idle.counts().unparked == 0 {
            drop(monitor.sleep_until_a_worker_wakes(&shared, state));
        }
        wake.join().unwrap();
        assert_eq!(shared.idle.counts().unparked, 1);
    });
}

#[test]
fn a_worker_woken_for_new_work_wakes_the_sleeping_monitor() {
    // The model above through the worker's own loop: the real `Core::run`
    // parks, is woken for a task spawned from outside, and must then wake
    // the monitor (`Core::run` calls `worker_woke` after a notifier's
    // wake). The task holds the worker until the monitor has looked (a
    // poll the monitor has to be awake to watch); a monitor left asleep
    // leaves it waiting, which loom reports as a deadlock.
    loom::model(|| {
        let (shared, mut locals) = shared_with_monitor(1);
        let local = locals.pop().unwrap();
        let worker = {
            let core = Core::new(0, shared.clone(), local);
            thread::spawn(move || {
                let exit = {
                    let _core = crate::runtime::context::set_core(&core);
                    core.run()
                };
                assert_eq!(exit, crate::runtime::scheduler::worker::RunExit::Shutdown);
                core.close();
            })
        };
        let (looked, ran) = (Signal::default(), Signal::default());
        let monitor = {
            let (shared, looked) = (shared.clone(), looked.clone());
            thread::spawn(move || {
                let state = shared.monitor.lock();
                if shared.idle.counts().unparked == 0 {
                    drop(shared.monitor.sleep_until_a_worker_wakes(&shared, state));
                } else {
                    drop(state);
                }
                looked.raise();
            })
        };
        drop(spawn_on(
            &shared,
            Raise {
                ran: ran.clone(),
                first: Some(looked),
            },
        ));
        ran.wait();
        monitor.join().unwrap();
        shared.begin_shutdown();
        worker.join().unwrap();
        shared.shutdown_drain();
        drop(shared);
        realign_registry_round_robin(1);
    });
}

#[test]
fn a_core_handed_back_as_shutdown_begins_is_closed_once() {
    loom::model(|| cores_handed_back_as_shutdown_begins(1));
}

/// A spare thread that cannot be started leaves nothing counted as on its
/// way. Under loom every thread start fails (`loom_support`), as one can
/// on a real machine (`EAGAIN`): the spawner's own start fails, the
/// threads asked of it are taken back, and a lent slot goes back to the
/// free list. A count left behind would make the monitor wait for threads
/// that never come (`find_threads` counts starting threads as found) or
/// refuse later ones (`spare_threads` against the limit). One thread, no
/// interleaving: the failure path run under the models' build. Asks for
/// two at once (an orphaned core each), so a count divided by the number
/// asked, rather than reduced by it, is seen too.
#[test]
fn a_spare_that_cannot_start_is_not_counted_as_on_its_way() {
    loom::model(|| {
        let (shared, mut locals) = shared_with_monitor_and_spares(2, 1);
        let monitor = &shared.monitor;
        monitor.add_spare_slots(2, locals.split_off(2));
        for attempt in 0..2 {
            let mut state = monitor.lock();
            assert_eq!(monitor.start_spares(&shared, &mut state, 2), 0);
            assert!(
                !monitor.hand_off(&shared, &mut state),
                "attempt {attempt}: a slot lent with no thread to run it"
            );
            assert_eq!(state.free.len(), 1, "attempt {attempt}: the slot not freed");
            assert!(state.lent.is_empty(), "attempt {attempt}");
            assert!(!state.held.contains(&true), "attempt {attempt}");
            assert_eq!(
                (state.starting, state.to_start, state.spawner),
                (0, 0, false),
                "attempt {attempt}: threads counted as on their way"
            );
            drop(state);
            assert_eq!(monitor.spare_threads.load(Ordering::Relaxed), 0);
        }
        drop(locals);
        drop(shared);
    });
}

/// The spawner thread (`run_spawner`) with two spare threads asked of it,
/// as `start_spares` leaves the counts, while shutdown begins. Under loom
/// every start fails, so each thread it tries is taken back at once, and
/// those it has not tried when it sees shutdown are taken back as it ends:
/// in every order, nothing is left counted as on its way.
#[test]
fn the_spawner_takes_back_every_thread_it_does_not_start() {
    loom::model(|| {
        let (shared, _locals) = shared_with_monitor(1);
        let monitor = &shared.monitor;
        {
            let mut state = monitor.lock();
            state.spawner = true;
            state.starting = 2;
            state.to_start = 2;
        }
        monitor.spare_threads.store(2, Ordering::Relaxed);
        let spawner = {
            let shared = shared.clone();
            thread::spawn(move || run_spawner(&shared))
        };
        shared.monitor.begin_shutdown();
        spawner.join().unwrap();
        let state = monitor.lock();
        assert_eq!(
            (state.starting, state.to_start),
            (0, 0),
            "threads counted as on their way after the spawner ended"
        );
        drop(state);
        assert_eq!(monitor.spare_threads.load(Ordering::Relaxed), 0);
    });
}

/// Spins (loom's yield, so the other threads run) until the monitor's
/// state satisfies `done`.
fn wait_for_state(
    shared: &crate::runtime::scheduler::Shared,
    done: impl Fn(&super::State) -> bool,
) {
    while !done(&shared.monitor.lock()) {
        thread::yield_now();
    }
}

/// A spare woken for a stall whose slot another thread took first goes
/// back to waiting and is no longer counted as coming (`woken_spares`, the
/// spares taken off the idle list and not yet back under the lock), so a
/// later stall still wakes one. The real `run_spare` on two loom threads
/// and the monitor's `hand_off`, one spare slot: the first spare is idle;
/// a second is on its way (started earlier, counted in `starting`) when
/// the first stall lends the slot and wakes the idle one, and in some
/// interleavings it takes the slot before the woken spare gets the lock
/// (in others the woken one does, or the second arrives first and is the
/// one woken). Once both are idle again with the slot back, a second stall
/// must wake one of them, which runs the slot and gives it back.
///
/// Fails with the woken spare counting itself back only when it finds
/// something to take (`state.woken_spares -= 1` in `run_spare` done only
/// if `lent` or `orphans` is not empty): the count stays at one with both
/// spares idle, `find_threads` and `hand_off` take it for a spare on its
/// way, and the second stall's slot is lent with no thread woken for it.
/// (Checked by hand: every other model of this file passes that break.)
#[test]
fn a_spare_woken_for_a_slot_taken_first_leaves_a_thread_for_the_next_stall() {
    loom::model(|| {
        let (shared, mut locals) = shared_with_monitor_and_spares(1, 1);
        let monitor = &shared.monitor;
        monitor.add_spare_slots(1, locals.split_off(1));
        let spare = || {
            // As the spawner leaves a thread it starts: counted alive and
            // on its way.
            monitor.spare_threads.fetch_add(1, Ordering::Relaxed);
            monitor.lock().starting += 1;
            let shared = shared.clone();
            thread::spawn(move || super::spare::run_spare(&shared))
        };
        let first = spare();
        wait_for_state(&shared, |state| state.idle_spares.len() == 1);
        let second = spare();
        // The first stall: the slot is lent and the idle spare woken.
        assert!(monitor.hand_off(&shared, &mut monitor.lock()));
        let settled = |state: &super::State| state.free.len() == 1 && state.idle_spares.len() == 2;
        wait_for_state(&shared, settled);
        // The second stall.
        {
            let mut state = monitor.lock();
            assert!(monitor.hand_off(&shared, &mut state));
            assert_eq!(
                state.idle_spares.len(),
                1,
                "the second stall woke no spare: one is still counted as coming \
                 (woken_spares {})",
                state.woken_spares
            );
        }
        // A spare takes the slot, runs it and gives it back.
        wait_for_state(&shared, settled);
        assert_eq!(
            monitor.lock().woken_spares,
            0,
            "spares counted as coming with every spare idle"
        );
        shared.begin_shutdown();
        first.join().unwrap();
        second.join().unwrap();
        assert_eq!(monitor.spare_threads.load(Ordering::Relaxed), 0);
        shared.shutdown_drain();
        drop(locals);
        drop(shared);
    });
}

/// The hand-back queue has several writers in production: every demoted
/// worker thread and demoted spare pushes to it, without a lock, whenever
/// its poll ends. Two demoted threads give their cores back at once while
/// shutdown begins. Each core holds a queued task; once every call has
/// returned, each core must have been closed exactly once (each task
/// dropped once), before `shutdown_drain` could hide a core left behind.
///
/// Fails with the drain at shutdown taking one item per call (`while let`
/// made `if let` in `drain_handed_back_at_shutdown`), which the one-pusher
/// model above passes: both cores are in the queue when `begin_shutdown`
/// drains it, and neither pusher saw `closed`. Fails also, as above, with
/// `hand_back`'s look at `closed` removed. (Its fences are not judged here
/// either: under loom the queue is a mutex.)
#[test]
fn two_cores_handed_back_as_shutdown_begins_are_each_closed_once() {
    loom::model(|| cores_handed_back_as_shutdown_begins(2));
}

/// `pushers` demoted threads each give back a worker core holding one
/// queued, never-polled task while shutdown begins; each core must have
/// been closed exactly once (its task dropped once) by the time every call
/// returned, checked before `shutdown_drain`, which would drop the tasks
/// through the registry and hide a core left in the queue.
fn cores_handed_back_as_shutdown_begins(pushers: usize) {
    let (shared, locals) = shared_with_monitor(pushers);
    let drops: Vec<Count> = (0..pushers).map(|_| Count::default()).collect();
    let demoted: Vec<_> = locals
        .into_iter()
        .zip(drops.clone())
        .enumerate()
        .map(|(index, (local, drops))| {
            let shared = shared.clone();
            thread::spawn(move || {
                let core = Core::new(index, shared.clone(), local);
                let options = SpawnOptions::plain(std::panic::Location::caller());
                // Never polled here: counts the drops of its future.
                let probe = DropProbe(drops);
                let future = async move {
                    let _probe = probe;
                    std::future::pending::<()>().await
                };
                let (task, join) = new_task(&shared, future, options);
                core.schedule_local(task, false);
                drop(join);
                // The demoted thread's poll is over: its core goes back.
                shared.monitor.hand_back(HandBack::Worker(core));
            })
        })
        .collect();
    shared.begin_shutdown();
    for thread in demoted {
        thread.join().unwrap();
    }
    for (core, drops) in drops.iter().enumerate() {
        assert_eq!(
            drops.get(),
            1,
            "core {core}, handed back as shutdown began, was not closed once"
        );
    }
    shared.shutdown_drain();
    for drops in &drops {
        assert_eq!(drops.get(), 1, "a task dropped twice");
    }
    drop(shared);
    realign_registry_round_robin(pushers);
}

/// The count of spare threads has writers with and without the monitor's
/// lock: the monitor counts new threads in under it (`start_spares`), while
/// a demoted spare counts itself out without it as it ends (`run_spare`,
/// `Monitor::spare_thread_gone`). Two spare threads alive, both demoted and
/// ending, while the monitor asks for two more against the limit (one
/// spare slot plus one worker: 2). Whatever the order, the count must end
/// at exactly the threads the monitor asked for: a lost update leaves it
/// too high (the monitor then refuses threads it may start, for good) or
/// too low (it starts more than `max_threads`).
///
/// Fails with `spare_thread_gone`'s `fetch_sub` split into a load and a
/// store, and with `start_spares`' `fetch_add` split so.
#[test]
fn spare_threads_counted_out_without_the_lock_race_the_monitor() {
    loom::model(|| {
        let (shared, mut locals) = shared_with_monitor_and_spares(1, 1);
        let monitor = &shared.monitor;
        monitor.add_spare_slots(1, locals.split_off(1));
        // The spawner runs (so `start_spares` only asks it), and two spare
        // threads are alive.
        monitor.lock().spawner = true;
        monitor.spare_threads.store(2, Ordering::Relaxed);
        let ending: Vec<_> = (0..2)
            .map(|_| {
                let shared = shared.clone();
                thread::spawn(move || shared.monitor.spare_thread_gone())
            })
            .collect();
        let asked = {
            let mut state = monitor.lock();
            let asked = monitor.start_spares(&shared, &mut state, 2);
            assert!(
                monitor.spare_threads.load(Ordering::Relaxed) <= 2,
                "more spare threads counted than the limit"
            );
            asked
        };
        for thread in ending {
            thread.join().unwrap();
        }
        assert_eq!(
            monitor.spare_threads.load(Ordering::Relaxed),
            asked,
            "the count of spare threads drifted"
        );
        drop(locals);
        drop(shared);
    });
}

/// A slot's demotion flag has two writers: the monitor raises it as it
/// lowers the priority of the thread it finds running the slot
/// (`PollWatch::demote`, under the thread id's lock), and the slot's next
/// thread lowers it as it publishes its id (`PollWatch::attach`). Here a
/// thread attaches to a free slot while the monitor, acting on a stall it
/// sampled earlier, demotes whatever thread runs the slot. If the monitor
/// lowered the new thread, the flag must be up once both are done: the
/// thread looks at it after each poll, and a lowered thread that never
/// sees it runs the slot lowered for good instead of handing it back.
///
/// Fails with `attach`'s store of the flag moved after the lock is
/// released (the monitor finds the new id, raises the flag and lowers the
/// thread in between, and the late store erases the raise): the bug this
/// model found, fixed.
#[test]
fn a_thread_demoted_as_it_attaches_to_a_slot_learns_it() {
    loom::model(|| {
        let (shared, _locals) = shared_with_monitor(1);
        const NEW_THREAD: i32 = 2;
        let lowered = Arc::new(std::sync::atomic::AtomicI32::new(0));
        let monitor = {
            let (shared, lowered) = (shared.clone(), lowered.clone());
            thread::spawn(move || {
                shared.remotes[0].watch.demote(|tid| {
                    lowered.store(tid, Ordering::Relaxed);
                    true
                })
            })
        };
        let watch = &shared.remotes[0].watch;
        let on_slot = watch.attach(NEW_THREAD);
        let demoted = monitor.join().unwrap();
        let lowered = lowered.load(Ordering::Relaxed);
        assert_eq!(
            demoted,
            lowered == NEW_THREAD,
            "the monitor's count of demotions"
        );
        if lowered == NEW_THREAD {
            assert!(
                watch.is_thread_demoted(),
                "the thread was lowered as it attached and its flag is down"
            );
        }
        drop(on_slot);
        drop(shared);
    });
}

/// The flag's second pair of writers: a demoted thread, after its poll,
/// raises its own priority back and clears the flag
/// (`PollWatch::restore_thread_priority`) while the monitor, seeing the
/// slot stall again, demotes whatever thread runs it. Both act on the
/// thread's nice value and the flag under the thread id's lock, so once
/// both are done the flag says whether the thread is lowered: a flag up
/// over a raised thread keeps the monitor from ever demoting it again (it
/// lowers only a thread whose flag is down), a flag down over a lowered
/// thread leaves it lowered for good (it restores only when the flag is
/// up).
///
/// Fails with the restore's clear of the flag moved before it takes the
/// lock: the monitor swaps the flag up and lowers the thread in between,
/// and the restore then raises the thread under a flag left up.
#[test]
fn a_thread_restoring_its_priority_as_the_monitor_demotes_it_ends_consistent() {
    loom::model(|| {
        let (shared, _locals) = shared_with_monitor(1);
        const THREAD: i32 = 2;
        // The thread's nice value as the kernel holds it: lowered or not.
        let lowered = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watch = &shared.remotes[0].watch;
        let on_slot = watch.attach(THREAD);
        // A first stall: the monitor demoted the thread during its poll.
        assert!(watch.demote(|tid| {
            assert_eq!(tid, THREAD);
            lowered.store(true, Ordering::Relaxed);
            true
        }));
        let monitor = {
            let (shared, lowered) = (shared.clone(), lowered.clone());
            thread::spawn(move || {
                shared.remotes[0].watch.demote(|_| {
                    lowered.store(true, Ordering::Relaxed);
                    true
                })
            })
        };
        // The poll ended: the thread raises itself back.
        let restored = watch.restore_with(|tid, _| {
            assert_eq!(tid, THREAD);
            lowered.store(false, Ordering::Relaxed);
            true
        });
        let demoted_again = monitor.join().unwrap();
        assert!(
            restored,
            "a thread demoted during its poll is restored after it"
        );
        assert_eq!(
            watch.is_thread_demoted(),
            lowered.load(Ordering::Relaxed),
            "the flag and the thread's nice value disagree"
        );
        // Either the monitor's second demotion came after the restore (the
        // thread is lowered again and knows it) or it found the flag still
        // up and left the lowered thread alone (then restored).
        assert_eq!(demoted_again, watch.is_thread_demoted());
        drop(on_slot);
        drop(shared);
    });
}
