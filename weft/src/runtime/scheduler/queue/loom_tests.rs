//! loom models of the local queue (capacity 4 under loom).
//!
//! Invariant checked by every model: each task pushed is obtained exactly
//! once — by the owner's pop, by a thief (returned or queued at the thief),
//! or through the overflow sink — never lost, never duplicated.
//!
//! Orderings relied on: `tail` is published with Release and read with
//! Acquire by thieves; every change of `head` is a CAS (AcqRel), so the
//! owner's pops, the overflow claim and a thief's claim/release are ordered
//! by `head`'s modification order. loom models all of these exactly (no
//! SeqCst is involved).
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p weft --lib --release queue`

use loom::sync::Mutex;
use loom::thread;

use super::{Local, Overflow, Steal, local};

#[derive(Default)]
struct Sink(Mutex<Vec<usize>>);

impl Overflow<usize> for Sink {
    fn push_batch(&self, tasks: impl Iterator<Item = usize>) {
        self.0.lock().unwrap().extend(tasks);
    }
}

/// An owner's ring holding tasks `0..count` (overflow, if any, in the sink).
fn filled(count: usize) -> (Local<usize>, Steal<usize>, Sink) {
    let (owner, steal) = local();
    let sink = Sink::default();
    for i in 0..count {
        let _ = owner.push_back(i, &sink);
    }
    (owner, steal, sink)
}

/// The tasks the ring sent to its overflow sink.
fn overflowed(sink: &Sink) -> Vec<usize> {
    sink.0.lock().unwrap().drain(..).collect()
}

fn drain(local: &Local<usize>) -> Vec<usize> {
    std::iter::from_fn(|| local.pop()).collect()
}

fn thief(steal: Steal<usize>, attempts: usize) -> thread::JoinHandle<Vec<usize>> {
    thread::spawn(move || {
        let (mine, _) = local();
        let mut got = Vec::new();
        for _ in 0..attempts {
            got.extend(steal.steal_into(&mine));
            got.extend(drain(&mine));
        }
        got
    })
}

fn assert_each_once(mut seen: Vec<usize>, pushed: usize) {
    seen.sort_unstable();
    assert_eq!(
        seen,
        (0..pushed).collect::<Vec<_>>(),
        "a task was lost or duplicated"
    );
}

#[test]
fn steal_races_pop() {
    loom::model(|| {
        let (owner, steal, sink) = filled(3);
        let thief = thief(steal, 1);
        let mut seen = drain(&owner);
        seen.extend(thief.join().unwrap());
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 3);
    });
}

#[test]
fn overflow_races_steal() {
    loom::model(|| {
        let (owner, steal, sink) = filled(4);
        let thief = thief(steal, 1);
        // The ring is full: these pushes overflow, or find room a thief made.
        for i in 4..6 {
            let _ = owner.push_back(i, &sink);
        }
        let mut seen = drain(&owner);
        seen.extend(thief.join().unwrap());
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 6);
    });
}

#[test]
fn two_thieves_and_owner_push_pop() {
    loom::model(|| {
        let (owner, steal, sink) = filled(2);
        let first = thief(steal.clone(), 1);
        let second = thief(steal, 1);
        let _ = owner.push_back(2, &sink);
        let mut seen: Vec<_> = owner.pop().into_iter().collect();
        let _ = owner.push_back(3, &sink);
        seen.extend(drain(&owner));
        seen.extend(first.join().unwrap());
        seen.extend(second.join().unwrap());
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 4);
    });
}

/// A task stolen into a thief's ring is stolen from there in turn: the
/// thief publishes what it copied into its own ring (`steal_into`'s store
/// of `dst`'s tail) for its own thieves, as any owner does. Fails with that
/// store made `Relaxed` (loom reports the second thief's read of the slot
/// as racing with the first thief's write).
#[test]
fn a_stolen_task_is_stolen_again() {
    loom::model(|| {
        let (owner, steal, sink) = filled(4);
        let (middle, middle_steal) = local();
        let middle_thief = thread::spawn(move || {
            // Takes two: runs one, queues the other in its own ring.
            let mut got: Vec<_> = steal.steal_into(&middle).into_iter().collect();
            got.extend(drain(&middle));
            got
        });
        let last_thief = thief(middle_steal, 1);
        let mut seen = drain(&owner);
        seen.extend(middle_thief.join().unwrap());
        seen.extend(last_thief.join().unwrap());
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 4);
    });
}

/// A thief refills a slot of its own ring that its own thief has just
/// copied out: `steal_into`'s Acquire load of its ring's `head` orders that
/// copy before the slot is written again. Fails with that load made
/// `Relaxed` (a race on the slot); `pop`'s Acquire load of `head` alone
/// made `Relaxed` does not fail it (the owner reads only slots it wrote).
#[test]
fn a_thief_refills_a_slot_its_own_thief_copied() {
    loom::model(|| {
        let (owner, steal, sink) = filled(4);
        // Set up before the race: the middle worker stole two (it runs
        // one; the other waits at position 0 of its ring), then queued
        // three of its own at positions 1-3, so the next task copied in
        // lands at position 4: slot 0 again.
        let (middle, middle_steal) = local();
        let mut seen: Vec<_> = steal.steal_into(&middle).into_iter().collect();
        for i in 4..7 {
            let _ = middle.push_back(i, &sink);
        }
        let last_thief = thief(middle_steal, 1);
        let middle_worker = thread::spawn(move || {
            let mut got = drain(&middle);
            got.extend(steal.steal_into(&middle));
            got.extend(drain(&middle));
            got
        });
        seen.extend(last_thief.join().unwrap());
        seen.extend(middle_worker.join().unwrap());
        seen.extend(drain(&owner));
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 7);
    });
}

/// A thief makes progress on a ring whose owner has already popped: with
/// tasks left and no other thief, the steal cannot be refused, whatever
/// the owner's concurrent pop does. `head` packs the thieves' claim marker
/// beside the owner's position; a model that only steals from a fresh ring
/// (both halves 0) cannot tell the marker lost from the marker kept.
/// Fails with the marker's half dropped by `pack` or by `unpack` (the ring
/// then looks forever mid-steal once the owner has popped, and every
/// steal is refused: nothing is lost, but no task is ever stolen).
#[test]
fn a_thief_steals_after_the_owner_popped() {
    loom::model(|| {
        let (owner, steal, sink) = filled(4);
        let mut seen: Vec<_> = owner.pop().into_iter().collect();
        let thief = thief(steal, 1);
        seen.extend(owner.pop());
        let stolen = thief.join().unwrap();
        assert!(
            !stolen.is_empty(),
            "a lone thief was refused while two or more tasks were queued"
        );
        seen.extend(stolen);
        seen.extend(drain(&owner));
        seen.extend(overflowed(&sink));
        assert_each_once(seen, 4);
    });
}
