//! The time driver: one timer wheel per worker plus one for timers armed
//! off the workers, the published earliest deadline of each, and the
//! *keeper*: the one sleeping worker that waits with a timeout.
//!
//! # Who touches what
//!
//! - A wheel (`WheelSlot::state`) is behind its own mutex. Its worker takes
//!   it to arm, cancel and fire timers: an uncontended lock on a line no
//!   other thread writes in the common case. Another thread takes it only
//!   to cancel or re-poll a timer armed there (a task that moved workers),
//!   or, as the keeper, to fire the due timers of a worker that is stuck in
//!   a long poll (it uses `try_lock`: a wheel whose owner holds it is being
//!   served). No lock covers more than one wheel, so nothing here is
//!   runtime-wide; arming touches the arming worker's wheel and reads (never
//!   writes) the keeper word.
//! - `WheelSlot::next` is a lower bound of the wheel's earliest deadline
//!   (ns), written only under the wheel's lock: lowered by an insert,
//!   recomputed after firing, left alone by a cancel (a stale-early value
//!   costs one early look, never a late timer).
//! - `keeper` packs the keeping worker's index and the instant it will wake
//!   at. Taken by a compare-exchange when free; after that only the keeper
//!   writes it, until it gives it up.
//!
//! # Why a timer armed while the keeper goes to sleep is not missed
//!
//! Arming thread A: lowers `next` of its wheel to `d`, `fence(SeqCst)`,
//! loads `keeper`; if `d` is before the keeper's wake time it pokes the
//! keeper (`Poke::Keeper`), or any sleeper when nobody keeps time.
//! Keeper K: stores its wake time `w` (the minimum of every `next`),
//! `fence(SeqCst)`, reads every `next` again and sleeps until the minimum
//! of both reads. If A's fence comes first, K's second read sees `d`; if
//! K's comes first, A's load sees `w` and A pokes K unless `d >= w`. Either
//! way K wakes by `d`. Fences and RMWs only (loom models both, unlike
//! SeqCst's total order on plain accesses); `loom_tests.rs` checks it
//! through these functions, and fails with either fence removed.
//!
//! The Acquire/Release orderings on `keeper` and `next` are stronger than
//! this needs: each word publishes only its own value (a wheel's timers are
//! under its mutex), and the handshake rests on the two fences.
//! `scripts/orderings.sh` weakens each of them alone (every load, store
//! and compare-exchange of `keeper` and `next` in this file) and every loom
//! model still passes, while weakening or removing either fence fails
//! (docs/experiments.md#memory-ordering-survey).
//! They are kept as the conventional pairing for words other threads read.
//!
//! # Shutdown
//!
//! `close` marks every wheel closed and takes out every waker (dropped by
//! the caller, outside the locks: dropping a waker can drop a task whose
//! `Sleep` cancels itself here). An arm after that returns `Closed`.

use std::task::Waker;

use crossbeam_utils::CachePadded;

use super::clock::Clock;
use super::wheel::{Fired, Key, Wheel};
use crate::util::locks::Mutex;
use crate::util::loom::sync::atomic::{AtomicU64, Ordering, fence};

/// Timers fired per wheel per call, so a slot where thousands expire at
/// once is spread over several turns of the worker loop (the woken tasks
/// meanwhile sit in its ring, where other workers can steal them).
pub(crate) const FIRE_BUDGET: usize = 256;

const ID_BITS: u32 = 16;
const NO_KEEPER: u64 = (1 << ID_BITS) - 1;
/// The wake time is stored in units of 16 ns, 48 bits: 52 days, then
/// "never".
const WAKE_UNIT_SHIFT: u32 = 4;
const WAKE_MAX: u64 = (1 << (64 - ID_BITS)) - 1;

/// Where a timer is armed and which timer it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimerRef {
    wheel: u32,
    key: Key,
}

/// Whom an arming thread must wake so its timer is not missed.
#[must_use = "a poke left undone can make a timer fire late"]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Poke {
    /// The keeper already wakes in time (or this timer is not the earliest).
    Nobody,
    /// Unpark this worker: it keeps time and would wake too late.
    Keeper(usize),
    /// Nobody keeps time: wake a sleeping worker, if any, to do it.
    AnySleeper,
}

/// The driver is shut down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Closed;

struct WheelState {
    wheel: Wheel,
    closed: bool,
}

struct WheelSlot {
    state: Mutex<WheelState>,
    next: AtomicU64,
}

pub(crate) struct Driver {
    pub(crate) clock: Clock,
    /// One per worker, then the outside wheel.
    wheels: Box<[CachePadded<WheelSlot>]>,
    keeper: AtomicU64,
}

// Two mutants of this line are harmless, said here because no model or
// test can tell: `|` made `^` (the halves never overlap: equivalent), and
// the unit shift turned around (`<<`: the keeper's word then reads 256
// times later than `arm` expects, so `arm` pokes a keeper that would have
// woken in time: extra wake-ups, never a missed timer; "never" still
// saturates to `WAKE_MAX`).
fn pack(wake_at_ns: u64, worker: u64) -> u64 {
    ((wake_at_ns >> WAKE_UNIT_SHIFT).min(WAKE_MAX) << ID_BITS) | worker
}

fn keeper_of(word: u64) -> Option<usize> {
    let id = word & NO_KEEPER;
    (id != NO_KEEPER).then_some(id as usize)
}

fn wake_units(word: u64) -> u64 {
    word >> ID_BITS
}

impl Driver {
    pub(crate) fn new(num_workers: usize) -> Driver {
        assert!((num_workers as u64) < NO_KEEPER, "too many workers");
        Driver {
            clock: Clock::new(),
            wheels: (0..=num_workers)
                .map(|_| {
                    CachePadded::new(WheelSlot {
                        state: Mutex::new(WheelState {
                            wheel: Wheel::new(),
                            closed: false,
                        }),
                        next: AtomicU64::new(u64::MAX),
                    })
                })
                .collect(),
            keeper: AtomicU64::new(pack(u64::MAX, NO_KEEPER)),
        }
    }

    /// The wheel of timers armed off the workers.
    pub(crate) fn outside_wheel(&self) -> usize {
        self.wheels.len() - 1
    }

    /// Arms a timer on wheel `home` (the arming worker's, or the outside
    /// wheel) firing `waker` at `deadline` ns.
    pub(crate) fn arm(
        &self,
        home: usize,
        deadline: u64,
        waker: &Waker,
    ) -> Result<(TimerRef, Poke), Closed> {
        let slot = &self.wheels[home];
        // Cloned before the lock: a waker's clone is the program's code
        // (`crate::util::locks`), and the wheel needs a waker of its own anyway.
        crate::util::locks::user_code("a waker's clone (arming a timer)");
        let waker = waker.clone();
        let mut state = slot.state.lock().unwrap();
        if state.closed {
            drop(state);
            crate::util::locks::user_code("a waker's drop (arming a timer after shutdown)");
            drop(waker);
            return Err(Closed);
        }
        let key = state.wheel.insert(deadline, waker);
        let timer = TimerRef {
            wheel: home as u32,
            key,
        };
        if deadline >= slot.next.load(Ordering::Relaxed) {
            return Ok((timer, Poke::Nobody));
        }
        slot.next.store(deadline, Ordering::Relaxed);
        drop(state);
        // Pairs with the fence in `begin_keeping`: see the module doc.
        fence(Ordering::SeqCst);
        let keeper = self.keeper.load(Ordering::Acquire);
        // The first match arm spares a poke when the keeper already wakes in time
        // for this deadline. Performance only: without it (the guard made
        // `false`) every earlier timer pokes, which is an extra wake-up
        // and never a missed timer, so no model or test can fail on it;
        // the loom models check the other way round, that a needed poke is
        // never spared.
        let poke = match keeper_of(keeper) {
            _ if (deadline >> WAKE_UNIT_SHIFT) >= wake_units(keeper) => Poke::Nobody,
            Some(worker) => Poke::Keeper(worker),
            None => Poke::AnySleeper,
        };
        Ok((timer, poke))
    }

    /// Whether the timer is still pending; if so its waker becomes `waker`.
    ///
    /// The common case, a task polled again with the waker it armed with,
    /// takes the lock once and clones nothing. A new waker is cloned
    /// outside the lock and the replaced one dropped after it (both are
    /// the program's code: `crate::util::locks`), at the cost of a second lock.
    /// (The `will_wake` test only saves that: made `false`, every test
    /// passes; made `true`, the new poller is never woken, `tests/time.rs`'s
    /// `a_sleep_polled_with_a_new_waker_wakes_that_one`.)
    #[inline]
    pub(crate) fn poll_armed(&self, timer: TimerRef, waker: &Waker) -> bool {
        let slot = &self.wheels[timer.wheel as usize];
        let same = slot
            .state
            .lock()
            .unwrap()
            .wheel
            .waker_will_wake(timer.key, waker);
        match same {
            None => false,
            Some(true) => true,
            Some(false) => self.replace_waker(slot, timer, waker),
        }
    }

    /// `poll_armed` with a waker that is not the armed one's.
    #[cold]
    fn replace_waker(&self, slot: &WheelSlot, timer: TimerRef, waker: &Waker) -> bool {
        crate::util::locks::user_code("a waker's clone (re-polled timer)");
        let waker = waker.clone();
        // The guard is a temporary of this statement: released before the
        // match below drops a waker.
        let replaced = slot
            .state
            .lock()
            .unwrap()
            .wheel
            .replace_waker(timer.key, waker);
        crate::util::locks::user_code("a waker's drop (re-polled timer)");
        match replaced {
            Ok(old) => {
                drop(old);
                true
            }
            // Fired or cancelled between the two locks.
            Err(unused) => {
                drop(unused);
                false
            }
        }
    }

    /// Whether the timer is still pending.
    pub(crate) fn is_armed(&self, timer: TimerRef) -> bool {
        let slot = &self.wheels[timer.wheel as usize];
        slot.state.lock().unwrap().wheel.contains(timer.key)
    }

    /// Disarms the timer if it has not fired and returns its waker (drop
    /// it outside any lock: it may be the last reference to a task).
    pub(crate) fn cancel(&self, timer: TimerRef) -> Option<Waker> {
        let slot = &self.wheels[timer.wheel as usize];
        slot.state.lock().unwrap().wheel.remove(timer.key)
    }

    /// The keeping worker, if any.
    pub(crate) fn keeper(&self) -> Option<usize> {
        keeper_of(self.keeper.load(Ordering::Acquire))
    }

    /// The earliest deadline any wheel may have (ns; `u64::MAX`: none).
    pub(crate) fn earliest(&self) -> u64 {
        self.wheels
            .iter()
            .map(|slot| slot.next.load(Ordering::Acquire))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Whether wheel `wheel` may have a timer due at `now`.
    ///
    /// A filter in front of `fire_due`, which fires only what is due: a
    /// `true` here when nothing is due costs a lock and a look at the
    /// wheel, never a timer fired early: a speed rule, which no model or
    /// test can pin (made `true`, the loom models only run far longer).
    #[inline]
    pub(crate) fn is_due(&self, wheel: usize, now: u64) -> bool {
        self.wheels[wheel].next.load(Ordering::Acquire) <= now
    }

    /// Moves the due timers' wakers of wheel `wheel` into `out` (at most
    /// [`FIRE_BUDGET`]). With `wait: false` a wheel whose lock is held is
    /// skipped (its owner is serving it). Returns whether due timers remain.
    pub(crate) fn fire_due(
        &self,
        wheel: usize,
        now: u64,
        wait: bool,
        out: &mut Vec<Waker>,
    ) -> bool {
        let slot = &self.wheels[wheel];
        let mut state = if wait {
            slot.state.lock().unwrap()
        } else {
            match slot.state.try_lock() {
                Ok(state) => state,
                Err(_) => return false,
            }
        };
        let fired = state.wheel.fire_due(now, FIRE_BUDGET, out);
        let next = state.wheel.next_deadline().unwrap_or(u64::MAX);
        slot.next.store(next, Ordering::Release);
        fired == Fired::BudgetSpent
    }

    /// Every wheel, for a caller that fires them all (the stall monitor,
    /// the test clock's `advance`).
    pub(crate) fn num_wheels(&self) -> usize {
        self.wheels.len()
    }

    /// Makes `me` the keeper if nobody is (or it already is), publishes the
    /// instant it will wake at, and returns it (ns; `u64::MAX`: no timer).
    /// `None`: another worker keeps time; sleep without a timeout.
    pub(crate) fn begin_keeping(&self, me: usize) -> Option<u64> {
        let current = self.keeper.load(Ordering::Acquire);
        match keeper_of(current) {
            Some(worker) if worker == me => {}
            Some(_) => return None,
            None => {
                let claim = pack(u64::MAX, me as u64);
                self.keeper
                    .compare_exchange(current, claim, Ordering::AcqRel, Ordering::Acquire)
                    .ok()?;
            }
        }
        loop {
            let first = self.earliest();
            self.keeper.store(pack(first, me as u64), Ordering::Release);
            // Pairs with the fence in `arm`: see the module doc. (And with
            // the one in `io::registrations`: the keeper reads the count of
            // sources after this fence, `runtime/io/registrations/loom_tests.rs`.)
            fence(Ordering::SeqCst);
            let second = self.earliest();
            if second >= first {
                return Some(first);
            }
            // A timer was armed between the reads: publish it too, so its
            // armer's look at the keeper word (or a later one's) is right.
        }
    }

    /// `me` stops keeping time (it has work, or the runtime shuts down).
    pub(crate) fn end_keeping(&self, me: usize) {
        let current = self.keeper.load(Ordering::Acquire);
        if keeper_of(current) == Some(me) {
            self.keeper
                .store(pack(u64::MAX, NO_KEEPER), Ordering::Release);
        }
    }

    /// Pending timers in every wheel.
    pub(crate) fn pending(&self) -> usize {
        self.wheels
            .iter()
            .map(|slot| slot.state.lock().unwrap().wheel.len())
            .sum()
    }

    /// Shutdown: closes every wheel and returns every pending timer's
    /// waker, for the caller to drop outside the locks.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for slot in self.wheels.iter() {
            let mut state = slot.state.lock().unwrap();
            state.closed = true;
            wakers.extend(state.wheel.drain());
            slot.next.store(u64::MAX, Ordering::Release);
        }
        wakers
    }
}

#[cfg(all(test, loom))]
mod loom_tests;
