//! The idle tasks, so that shutdown can cancel the ones nobody will wake.
//!
//! A task that is pending with its waker held by something outside the
//! runtime (or by nothing at all) is in no queue; without this list the
//! runtime could not drop its future at shutdown. Each entry holds a clone of
//! the task's waker: shutdown wakes it, the wake reaches the (shut down)
//! scheduler, which drops the `Runnable` and with it the future.
//!
//! # Lazy registration
//!
//! Only a task that can be idle needs an entry, and a task can be idle only
//! after a poll returned `Pending`. So a task registers itself the first time
//! its future returns `Pending`, not at spawn: the many tasks that finish in
//! their first poll never touch this list. At shutdown every other task is
//! in a queue (drained), or being polled (its worker finishes the poll: if
//! the task registers then and finds the list closed, it wakes itself, and
//! the shut-down scheduler drops it).
//!
//! # Invariants
//!
//! - An entry is inserted by the task's own future wrapper, under the
//!   shard's lock, at its first `Pending`; it is removed by the same wrapper
//!   when the future is dropped (completion or cancellation), exactly once.
//! - `close` takes every waker out under the lock and marks each shard
//!   closed; later inserts fail and later removals are no-ops. Wakers are
//!   woken after the lock is released, because waking drops futures, whose
//!   wrappers lock the shard again.
//!
//! Shards: `4 × workers`, rounded up to a power of two. A worker uses its
//! own shard; other threads go round-robin over all of them.
//!
//! # Entries and task dumps
//!
//! Each slot owns an [`Entry`], allocated when its shard first grows to
//! that slot and freed only with the registry, so its address is stable and
//! the task can write it without the lock: the task's own poll counts its
//! polls, the time of the polls the worker times, and when it went idle
//! (the polling thread is the only writer of those); a wake marks it
//! scheduled. `Handle::dump` (`runtime/dump.rs`) copies the entries of the
//! occupied slots under each shard's lock and formats after. A slot's task
//! pointer is read only under the lock: the task removes its entry, under
//! the same lock, before its memory can go.

use std::cell::Cell;
use std::ptr::NonNull;
// `std` atomics, not loom's: an entry's counters are read by dumps, a
// snapshot that is not a protocol (nothing acts on what it reads).
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::Waker;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use super::TaskMeta;
use crate::util::locks::Mutex;

/// What a registered task publishes for dumps. Owned by one registry slot
/// for the registry's whole life (a new task of the slot resets it).
pub(crate) struct Entry {
    shard: u32,
    slot: u32,
    /// Polls so far. Written only by the thread polling the task.
    polls: AtomicU64,
    /// Total time of the polls the worker timed, and how many there were.
    /// Written only by the thread polling the task.
    timed_ns: AtomicU64,
    timed_polls: AtomicU64,
    /// When the last poll ended, ns since the registry's epoch, as the
    /// polling worker last read its clock (see `PollEnd`).
    idle_since_ns: AtomicU64,
    /// Woken since its last poll: set by the schedule function, cleared at
    /// the end of each poll (a wake during a poll reaches the schedule
    /// function only after the poll returned, so the clear never hides it).
    scheduled: AtomicBool,
}

/// How a poll ended, for the polled task's entry: its end as the polling
/// worker last read its clock, and the poll's length if the worker timed it.
#[derive(Clone, Copy)]
pub(crate) struct PollEnd {
    pub(crate) clock_ns: u64,
    pub(crate) timed: Option<Duration>,
}

impl Entry {
    fn new(shard: u32, slot: u32) -> Entry {
        Entry {
            shard,
            slot,
            polls: AtomicU64::new(0),
            timed_ns: AtomicU64::new(0),
            timed_polls: AtomicU64::new(0),
            idle_since_ns: AtomicU64::new(0),
            scheduled: AtomicBool::new(false),
        }
    }

    /// The shard this entry belongs to (the loom models' round-robin
    /// realignment reads it).
    #[cfg(all(test, loom))]
    pub(crate) fn shard(&self) -> u32 {
        self.shard
    }

    /// After a poll that returned `Pending`; called only by the polling
    /// thread (a load and a store each: no read-modify-write).
    #[inline]
    pub(crate) fn polled(&self, end: PollEnd) {
        let bump = |counter: &AtomicU64, by: u64| {
            counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
        };
        bump(&self.polls, 1);
        if let Some(took) = end.timed {
            bump(&self.timed_ns, duration_ns(took));
            bump(&self.timed_polls, 1);
        }
        self.idle_since_ns.store(end.clock_ns, Ordering::Relaxed);
        self.scheduled.store(false, Ordering::Relaxed);
    }

    /// The task was woken (its schedule function runs).
    #[inline]
    pub(crate) fn mark_scheduled(&self) {
        self.scheduled.store(true, Ordering::Relaxed);
    }
}

fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// A registered task as a dump copies it.
pub(crate) struct EntrySnapshot {
    /// The task's address (its id in a dump).
    pub(crate) task: usize,
    /// The task's lane-and-label word (`runtime/task/lane.rs`).
    pub(crate) lane_and_label: usize,
    pub(crate) polls: u64,
    pub(crate) timed_ns: u64,
    pub(crate) timed_polls: u64,
    pub(crate) idle_since_ns: u64,
    pub(crate) scheduled: bool,
}

struct Slot {
    /// The registered task's waker; `None` for a free slot.
    waker: Option<Waker>,
    /// The registered task's metadata, read only under the shard's lock.
    task: *const TaskMeta,
    /// This slot's entry (from `Box::into_raw`, freed by `Shard::drop`).
    entry: NonNull<Entry>,
}

#[derive(Default)]
struct Shard {
    slots: Vec<Slot>,
    free: Vec<u32>,
    closed: bool,
}

// SAFETY: a `Slot`'s pointers are dereferenced only under the shard's lock
// (the task pointer: its task removes the slot under that lock before its
// memory goes) or by the task owning the slot (the entry, whose fields are
// atomics); both point to `Sync` data.
unsafe impl Send for Shard {}

impl Drop for Shard {
    fn drop(&mut self) {
        for slot in self.slots.drain(..) {
            // SAFETY: `entry` came from `Box::into_raw` in `insert` and is
            // freed only here, once; the registry outlives every task (each
            // holds the runtime), so no task still points to it.
            drop(unsafe { Box::from_raw(slot.entry.as_ptr()) });
        }
    }
}

pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
    /// The zero of the entries' clock.
    epoch: Instant,
}

/// The registry is closed: the runtime is shutting down.
#[derive(Debug)]
pub(crate) struct Closed;

thread_local! {
    static NEXT_SHARD: Cell<usize> = const { Cell::new(0) };
}

impl Registry {
    pub(crate) fn new(num_workers: usize) -> Registry {
        let n = (num_workers * 4).next_power_of_two();
        Registry {
            shards: (0..n)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
            epoch: Instant::now(),
        }
    }

    /// `instant` on the entries' clock (ns since the registry's epoch).
    pub(crate) fn clock_ns(&self, instant: Instant) -> u64 {
        duration_ns(instant.saturating_duration_since(self.epoch))
    }

    fn shard_for(&self, worker: Option<usize>) -> usize {
        let n = self.shards.len();
        match worker {
            // `n` is above every worker index, so this is the index itself;
            // any shard would be correct (an entry remembers its shard),
            // only contended: `/` (shard 0 for all) is a performance-only
            // mutant.
            Some(index) => index % n,
            None => NEXT_SHARD.with(|next| {
                let shard = next.get().wrapping_add(1);
                next.set(shard);
                shard % n
            }),
        }
    }

    /// Registers an idle-capable task by its waker and metadata, after its
    /// first poll (`first` says how that ended). `worker` is the worker
    /// polling it, if any (its shard is then uncontended). The entry stays
    /// the task's until [`remove`](Self::remove).
    pub(crate) fn insert(
        &self,
        worker: Option<usize>,
        waker: Waker,
        task: *const TaskMeta,
        first: PollEnd,
    ) -> Result<NonNull<Entry>, Closed> {
        let shard_index = self.shard_for(worker);
        let mut shard = self.shards[shard_index].lock().unwrap();
        if shard.closed {
            return Err(Closed);
        }
        let slot = match shard.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = shard.slots.len() as u32;
                let entry = Box::new(Entry::new(shard_index as u32, slot));
                shard.slots.push(Slot {
                    waker: None,
                    task: std::ptr::null(),
                    entry: NonNull::from(Box::leak(entry)),
                });
                slot
            }
        };
        let slot = &mut shard.slots[slot as usize];
        slot.waker = Some(waker);
        slot.task = task;
        // SAFETY: the slot's entry lives until the registry drops (see
        // `Shard::drop`); it was free, so no other task writes it.
        let entry = unsafe { slot.entry.as_ref() };
        let timed = first.timed.map_or(0, duration_ns);
        entry.polls.store(1, Ordering::Relaxed);
        entry.timed_ns.store(timed, Ordering::Relaxed);
        entry
            .timed_polls
            .store(u64::from(first.timed.is_some()), Ordering::Relaxed);
        entry.idle_since_ns.store(first.clock_ns, Ordering::Relaxed);
        entry.scheduled.store(false, Ordering::Relaxed);
        Ok(slot.entry)
    }

    /// Removes a task's entry (the task's future is being dropped).
    pub(crate) fn remove(&self, entry: &Entry) {
        let waker = {
            let mut shard = self.shards[entry.shard as usize].lock().unwrap();
            if shard.closed {
                return;
            }
            shard.free.push(entry.slot);
            let slot = &mut shard.slots[entry.slot as usize];
            slot.task = std::ptr::null();
            slot.waker.take()
        };
        // Dropped outside the lock. It is this task's own waker and the task
        // is being dropped by a holder of its `Runnable`, so this never frees
        // the task or re-enters the registry.
        drop(waker);
    }

    /// Closes every shard and returns the wakers of the registered tasks.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock().unwrap();
            shard.closed = true;
            shard.free.clear();
            for slot in shard.slots.iter_mut() {
                slot.task = std::ptr::null();
                wakers.extend(slot.waker.take());
            }
        }
        wakers
    }

    /// Appends a copy of every registered task's entry to `out`, one shard
    /// lock at a time (each held only while its slots are copied).
    pub(crate) fn snapshot(&self, out: &mut Vec<EntrySnapshot>) {
        for shard in self.shards.iter() {
            let shard = shard.lock().unwrap();
            // A capacity hint: `+` for `-` (a mutant) only reserves more.
            out.reserve(shard.slots.len() - shard.free.len().min(shard.slots.len()));
            for slot in shard.slots.iter().filter(|slot| slot.waker.is_some()) {
                // SAFETY: an occupied slot's task is alive while the shard's
                // lock is held: the task removes its entry under this lock
                // before its metadata can be freed.
                let meta = unsafe { &*slot.task };
                // SAFETY: the entry lives as long as the registry.
                let entry = unsafe { slot.entry.as_ref() };
                out.push(EntrySnapshot {
                    task: slot.task as usize,
                    lane_and_label: meta.lane_and_label_bits(),
                    polls: entry.polls.load(Ordering::Relaxed),
                    timed_ns: entry.timed_ns.load(Ordering::Relaxed),
                    timed_polls: entry.timed_polls.load(Ordering::Relaxed),
                    idle_since_ns: entry.idle_since_ns.load(Ordering::Relaxed),
                    scheduled: entry.scheduled.load(Ordering::Relaxed),
                });
            }
        }
    }
}
