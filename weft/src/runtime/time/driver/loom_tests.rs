//! loom models of the timekeeping handshake, through the driver's own
//! functions (`arm`, `begin_keeping`, `end_keeping`): a worker going to sleep
//! as the keeper cannot miss a timer armed concurrently on another worker's
//! wheel or on the outside wheel.
//!
//! Each fails when the protocol is broken on purpose: remove the fence in
//! `begin_keeping` or the one in `arm` and loom finds the interleaving where
//! the keeper reads the wheels' old `next` while the armer reads the old
//! keeper word, and the keeper sleeps past the timer.

use std::task::Waker;

use loom::sync::Arc;
use loom::thread;

use super::{Driver, Poke};

/// The keeper's wake time and what the armer decided: together they must
/// get the keeper up by `deadline`.
fn kept(wake_at: u64, poke: Poke, deadline: u64) -> bool {
    wake_at <= deadline || poke == Poke::Keeper(0)
}

#[test]
fn a_timer_armed_while_the_keeper_goes_to_sleep_is_not_missed() {
    loom::model(|| {
        let driver = Arc::new(Driver::new(2));
        let armer = {
            let driver = driver.clone();
            thread::spawn(move || driver.arm(1, 1_000, Waker::noop()).unwrap().1)
        };
        let wake_at = driver.begin_keeping(0).expect("nobody else keeps time");
        let poke = armer.join().unwrap();
        assert!(
            kept(wake_at, poke, 1_000),
            "keeper sleeps until {wake_at} past a timer at 1000 and nobody pokes it ({poke:?})"
        );
    });
}

/// A timer at `earlier` armed off the workers while the keeper goes to
/// sleep for one at `later`, already on worker 1's wheel.
fn earlier_timer_beside_a_kept_one(later: u64, earlier: u64) {
    let driver = Arc::new(Driver::new(2));
    let _ = driver.arm(1, later, Waker::noop()).unwrap();
    let armer = {
        let driver = driver.clone();
        // Off the workers: the outside wheel.
        thread::spawn(move || {
            let outside = driver.outside_wheel();
            driver.arm(outside, earlier, Waker::noop()).unwrap().1
        })
    };
    let wake_at = driver.begin_keeping(0).expect("nobody else keeps time");
    let poke = armer.join().unwrap();
    assert!(wake_at <= later, "the timer already armed is kept");
    assert!(
        kept(wake_at, poke, earlier),
        "keeper sleeps until {wake_at} past a timer at {earlier} and nobody pokes it ({poke:?})"
    );
}

#[test]
fn an_earlier_timer_than_the_one_kept_is_not_missed() {
    loom::model(|| earlier_timer_beside_a_kept_one(5_000, 2_000));
}

/// As above, 68.7 s into the clock: the kept wake time is 2^32 units of
/// 16 ns, so a unit conversion that loses the word's top bits (the keeper
/// word's `wake_units` shifting the wrong way reads it as 0) makes the
/// armer think the keeper already wakes in time. Small deadlines cannot
/// show that; this one fails with that shift turned around.
#[test]
fn an_earlier_timer_is_not_missed_late_in_the_clock() {
    const LATER: u64 = 1 << 36;
    loom::model(|| earlier_timer_beside_a_kept_one(LATER, LATER - 3_000));
}

#[test]
fn with_no_keeper_an_armer_asks_for_a_sleeper() {
    loom::model(|| {
        let driver = Arc::new(Driver::new(2));
        assert!(driver.begin_keeping(0).is_some());
        let leaver = {
            let driver = driver.clone();
            thread::spawn(move || driver.end_keeping(0))
        };
        let (_, poke) = driver.arm(1, 1_000, Waker::noop()).unwrap();
        leaver.join().unwrap();
        // Either the keeper was still there (poked) or nobody was and a
        // sleeper is asked to take over: never silence.
        assert_ne!(poke, Poke::Nobody);
        assert_eq!(driver.keeper(), None);
    });
}

/// The outside wheel has many armers in production (`block_on` threads,
/// blocking-pool threads, spare threads): two of them arm it at once
/// while a worker goes to sleep as the keeper. The keeper must be up by
/// the earlier deadline or poked (a poked keeper looks at every wheel
/// again), and the wheels' lower bound must end no later than the earlier
/// deadline: a later deadline's store never overwrites an earlier one's,
/// since `next` is written under the wheel's lock.
///
/// Fails with `arm`'s store of `next` moved after the lock is released:
/// both armers read the old bound, the later one stores last, and the
/// next keeper sleeps past the earlier timer.
#[test]
fn two_threads_arming_the_outside_wheel_leave_the_earlier_bound() {
    loom::model(|| {
        let driver = Arc::new(Driver::new(2));
        let outside = driver.outside_wheel();
        let armers: Vec<_> = [1_000, 2_000]
            .into_iter()
            .map(|deadline| {
                let driver = driver.clone();
                thread::spawn(move || driver.arm(outside, deadline, Waker::noop()).unwrap().1)
            })
            .collect();
        let wake_at = driver.begin_keeping(0).expect("nobody else keeps time");
        let pokes: Vec<Poke> = armers
            .into_iter()
            .map(|armer| armer.join().unwrap())
            .collect();
        assert!(
            wake_at <= 1_000 || pokes.contains(&Poke::Keeper(0)),
            "keeper sleeps until {wake_at} past a timer at 1000 and nobody pokes it ({pokes:?})"
        );
        let bound = driver.earliest();
        assert!(
            bound <= 1_000,
            "the wheels' lower bound is {bound}, behind the timer at 1000: the next keeper \
             sleeps past it"
        );
    });
}

/// A wheel's `next` has two writers in production besides the armers: any
/// worker firing the wheel's due timers (`fire_due`, with `try_lock` when
/// it fires another worker's wheel as the keeper) recomputes the bound,
/// while the wheel's own thread (or, on the outside wheel, any thread off
/// the workers) arms a new timer there. Wheel `wheel` holds a timer at 300;
/// one thread arms one at 1000 while another fires what is due at 500.
/// Whatever the order, the bound must end no later than the earliest timer
/// still pending (else the keeper sleeps past it), and the new timer must
/// still be armed.
///
/// Fails with `fire_due`'s store of `next` moved after the wheel's lock is
/// released: the firer computes "nothing left" (`u64::MAX`), the armer
/// inserts 1000 and stores it, and the firer's late store erases it.
fn an_arm_racing_fire_due_leaves_the_bound(wheel_of: fn(&Driver) -> usize) {
    let driver = Arc::new(Driver::new(2));
    let wheel = wheel_of(&driver);
    let _ = driver.arm(wheel, 300, Waker::noop()).unwrap();
    let armer = {
        let driver = driver.clone();
        thread::spawn(move || driver.arm(wheel, 1_000, Waker::noop()).unwrap().0)
    };
    let firer = {
        let driver = driver.clone();
        thread::spawn(move || {
            let mut fired = Vec::new();
            // As the keeper fires a wheel it does not own: skipped if its
            // lock is held.
            let _ = driver.fire_due(wheel, 500, false, &mut fired);
            fired.len()
        })
    };
    let timer = armer.join().unwrap();
    let fired = firer.join().unwrap();
    assert!(driver.is_armed(timer), "the timer at 1000 was lost");
    let earliest_pending = if fired == 0 { 300 } else { 1_000 };
    let bound = driver.earliest();
    assert!(
        bound <= earliest_pending,
        "the bound is {bound} with a timer at {earliest_pending} pending ({fired} fired): \
         the keeper sleeps past it"
    );
}

#[test]
fn an_arm_racing_fire_due_on_a_workers_wheel_leaves_the_bound() {
    loom::model(|| an_arm_racing_fire_due_leaves_the_bound(|_| 1));
}

#[test]
fn an_arm_racing_fire_due_on_the_outside_wheel_leaves_the_bound() {
    loom::model(|| an_arm_racing_fire_due_leaves_the_bound(Driver::outside_wheel));
}
