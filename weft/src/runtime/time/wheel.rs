//! A hierarchical timer wheel: the data structure alone, no locking, no
//! clock (the driver in `driver.rs` owns one per worker behind its lock).
//!
//! # Layout
//!
//! Time is counted in nanoseconds since the driver's epoch; the wheel works
//! in *ticks* of [`TICK_NS`] (2^16 ns, about 65.5 µs). [`LEVELS`] levels of
//! 64 slots each: a level-`l` slot covers 64^l ticks, so level 0 spans
//! 4.2 ms, level 1 268 ms, level 2 17 s, level 3 18 min, level 4 19.5 h,
//! level 5 52 days. A deadline further out than that is placed in the
//! furthest top-level slot and placed again when that slot comes due
//! (deadlines are capped far below that anyway: `Instant::far_future`).
//!
//! An entry lives at the lowest level whose slot range still contains both
//! the current tick (`elapsed`) and its deadline's tick, so every entry of
//! a lower level is due before any entry of a higher one: the earliest
//! deadline sits in the first occupied slot of the lowest occupied level.
//! When a level-`l > 0` slot comes due its entries *cascade*: each is
//! placed again, now at a lower level.
//!
//! Unlike tokio's 1 ms wheel, a level-0 slot is not fired as a whole: its
//! entries keep their exact deadline in nanoseconds and each fires only once
//! `now >= deadline`, so a `sleep(1 ms)` is not rounded up to the next
//! millisecond, and [`Wheel::next_deadline`] is exact for level 0 (a scan
//! of one slot, ~6 entries at 100,000 timers a second).
//!
//! # Storage
//!
//! Entries are records in a slab (`Vec<Record>`) linked into per-slot
//! doubly-linked lists by index, so insert and remove are O(1) with no
//! allocation once the slab has grown. A [`Key`] names a record by index and
//! generation: a record's generation changes when it is freed (fired or
//! removed), so a stale key never touches another timer's record. 40 bytes
//! per pending timer.
//!
//! Pinned by the tests in `wheel/tests.rs` (each timer fires once, at or
//! after its deadline, at every level; removal at every level leaves
//! exactly the rest) and `tests/time.rs`'s
//! `a_sleep_polled_with_a_new_waker_wakes_that_one`.

use std::task::Waker;

/// log2 of the tick length in nanoseconds.
pub(crate) const TICK_SHIFT: u32 = 16;
/// One tick: the width of a level-0 slot, in nanoseconds.
#[cfg(all(test, not(loom)))]
pub(crate) const TICK_NS: u64 = 1 << TICK_SHIFT;
const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
pub(crate) const LEVELS: usize = 6;
/// Ticks the wheel can tell apart from `elapsed`.
const MAX_TICKS: u64 = 1 << (SLOT_BITS as usize * LEVELS);
const NIL: u32 = u32::MAX;
const FREE: u16 = u16::MAX;

/// Names a pending timer; stale once the timer fired or was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    index: u32,
    generation: u32,
}

struct Record {
    deadline: u64,
    waker: Option<Waker>,
    prev: u32,
    /// The next record in the slot's list, or in the free list.
    next: u32,
    generation: u32,
    /// `level * 64 + slot`, or [`FREE`].
    place: u16,
}

struct Level {
    /// Bit `s` set: slot `s` holds at least one entry.
    occupied: u64,
    heads: [u32; SLOTS],
}

/// What [`Wheel::fire_due`] left behind.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fired {
    /// Every due timer fired.
    AllDue,
    /// The budget ran out with due timers left.
    BudgetSpent,
}

pub(crate) struct Wheel {
    /// Every tick before this one has been processed.
    elapsed: u64,
    levels: [Level; LEVELS],
    records: Vec<Record>,
    free: u32,
    len: usize,
}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        Wheel {
            elapsed: 0,
            levels: std::array::from_fn(|_| Level {
                occupied: 0,
                heads: [NIL; SLOTS],
            }),
            records: Vec::new(),
            free: NIL,
            len: 0,
        }
    }

    /// Pending timers.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Arms a timer firing `waker` once `now >= deadline` (nanoseconds).
    pub(crate) fn insert(&mut self, deadline: u64, waker: Waker) -> Key {
        let index = self.alloc(deadline, waker);
        self.place(index);
        self.len += 1;
        Key {
            index,
            generation: self.records[index as usize].generation,
        }
    }

    /// Whether `key` still names a pending timer.
    pub(crate) fn contains(&self, key: Key) -> bool {
        self.records
            .get(key.index as usize)
            .is_some_and(|r| r.generation == key.generation && r.place != FREE)
    }

    /// Whether a pending timer's waker wakes the same task as `waker`;
    /// `None` if the timer already fired or was removed. (No clone: the
    /// caller clones a new waker outside its lock and hands it to
    /// [`replace_waker`](Self::replace_waker).)
    pub(crate) fn waker_will_wake(&self, key: Key, waker: &Waker) -> Option<bool> {
        if !self.contains(key) {
            return None;
        }
        let current = self.records[key.index as usize].waker.as_ref();
        Some(current.is_some_and(|current| current.will_wake(waker)))
    }

    /// Replaces a pending timer's waker (a task polled with a new waker)
    /// and returns the replaced one, for the caller to drop outside its
    /// lock; gives `waker` back if the timer already fired or was removed.
    pub(crate) fn replace_waker(&mut self, key: Key, waker: Waker) -> Result<Option<Waker>, Waker> {
        if !self.contains(key) {
            return Err(waker);
        }
        Ok(self.records[key.index as usize].waker.replace(waker))
    }

    /// Disarms a pending timer and returns its waker; `None` if it already
    /// fired or was removed.
    pub(crate) fn remove(&mut self, key: Key) -> Option<Waker> {
        if !self.contains(key) {
            return None;
        }
        self.unlink(key.index);
        self.len -= 1;
        self.release(key.index)
    }

    /// The earliest instant (ns) at which [`fire_due`](Self::fire_due) has
    /// work: exact for a level-0 slot, the start of the slot (when it
    /// cascades) above. Never later than any pending deadline.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        let (level, slot, start) = self.next_slot()?;
        if level > 0 {
            return Some(start << TICK_SHIFT);
        }
        let mut at = self.levels[0].heads[slot];
        let mut earliest = u64::MAX;
        while at != NIL {
            let record = &self.records[at as usize];
            earliest = earliest.min(record.deadline);
            at = record.next;
        }
        Some(earliest)
    }

    /// Fires (pushes the waker of) every timer due at `now`, at most
    /// `budget` of them, cascading higher slots on the way.
    pub(crate) fn fire_due(&mut self, now: u64, budget: usize, out: &mut Vec<Waker>) -> Fired {
        let now_tick = now >> TICK_SHIFT;
        let mut fired = 0;
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now_tick {
                break;
            }
            self.elapsed = start;
            if level > 0 {
                self.cascade(level, slot);
                continue;
            }
            let mut at = self.levels[0].heads[slot];
            while at != NIL {
                let next = self.records[at as usize].next;
                if self.records[at as usize].deadline <= now {
                    if fired == budget {
                        return Fired::BudgetSpent;
                    }
                    self.unlink(at);
                    self.len -= 1;
                    out.extend(self.release(at));
                    fired += 1;
                }
                at = next;
            }
            if self.levels[0].heads[slot] != NIL {
                // What is left is due later within this tick.
                break;
            }
        }
        self.elapsed = self.elapsed.max(now_tick);
        Fired::AllDue
    }

    /// Removes every timer and returns their wakers (shutdown).
    pub(crate) fn drain(&mut self) -> Vec<Waker> {
        let wakers = self.records.iter_mut().filter_map(|r| r.waker.take());
        let wakers = wakers.collect();
        *self = Wheel::new();
        wakers
    }

    /// The first occupied slot at the lowest occupied level, with its
    /// absolute start tick.
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        for (level, slots) in self.levels.iter().enumerate() {
            if slots.occupied == 0 {
                continue;
            }
            let shift = SLOT_BITS as usize * level;
            let now_slot = ((self.elapsed >> shift) as usize) % SLOTS;
            // Rotate so that bit 0 is the current slot; the first set bit
            // is then the distance to the next occupied slot.
            let distance = slots
                .occupied
                .rotate_right(now_slot as u32)
                .trailing_zeros() as usize;
            let slot = (now_slot + distance) % SLOTS;
            let level_span = 1u64 << (shift + SLOT_BITS as usize);
            let base = self.elapsed & !(level_span - 1);
            let mut start = base + ((slot as u64) << shift);
            if slot < now_slot {
                start += level_span;
            }
            return Some((level, slot, start));
        }
        None
    }

    fn cascade(&mut self, level: usize, slot: usize) {
        let mut at = std::mem::replace(&mut self.levels[level].heads[slot], NIL);
        self.levels[level].occupied &= !(1 << slot);
        while at != NIL {
            let next = self.records[at as usize].next;
            self.place(at);
            at = next;
        }
    }

    /// Links record `index` into the slot its deadline belongs to.
    fn place(&mut self, index: u32) {
        let tick = (self.records[index as usize].deadline >> TICK_SHIFT)
            .clamp(self.elapsed, self.elapsed + MAX_TICKS - 1);
        // The highest bit in which the tick differs from `elapsed` (at least
        // bit 0's group) gives the level.
        let differs = ((self.elapsed ^ tick) | (SLOTS as u64 - 1)).min(MAX_TICKS - 1);
        let level = (63 - differs.leading_zeros() as usize) / SLOT_BITS as usize;
        let slot = ((tick >> (SLOT_BITS as usize * level)) as usize) % SLOTS;
        let head = self.levels[level].heads[slot];
        let record = &mut self.records[index as usize];
        record.place = (level * SLOTS + slot) as u16;
        record.prev = NIL;
        record.next = head;
        if head != NIL {
            self.records[head as usize].prev = index;
        }
        self.levels[level].heads[slot] = index;
        self.levels[level].occupied |= 1 << slot;
    }

    fn unlink(&mut self, index: u32) {
        let record = &self.records[index as usize];
        let (prev, next, place) = (record.prev, record.next, record.place as usize);
        let (level, slot) = (place / SLOTS, place % SLOTS);
        if prev == NIL {
            self.levels[level].heads[slot] = next;
            if next == NIL {
                self.levels[level].occupied &= !(1 << slot);
            }
        } else {
            self.records[prev as usize].next = next;
        }
        if next != NIL {
            self.records[next as usize].prev = prev;
        }
    }

    fn alloc(&mut self, deadline: u64, waker: Waker) -> u32 {
        if self.free == NIL {
            let index = u32::try_from(self.records.len())
                .ok()
                .filter(|&i| i != NIL)
                .expect("more than 4 billion timers pending on one worker");
            self.records.push(Record {
                deadline,
                waker: Some(waker),
                prev: NIL,
                next: NIL,
                generation: 0,
                place: FREE,
            });
            return index;
        }
        let index = self.free;
        let record = &mut self.records[index as usize];
        self.free = record.next;
        record.deadline = deadline;
        record.waker = Some(waker);
        index
    }

    fn release(&mut self, index: u32) -> Option<Waker> {
        let record = &mut self.records[index as usize];
        record.place = FREE;
        record.generation = record.generation.wrapping_add(1);
        record.next = self.free;
        self.free = index;
        record.waker.take()
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
