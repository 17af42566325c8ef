//! Every live task, so that shutdown can cancel the ones nobody will wake.
//!
//! A task that is pending with its waker held by something outside the
//! runtime (or by nothing at all) is in no queue; without this list the
//! runtime could not drop its future at shutdown. Each entry holds a clone of
//! the task's waker: shutdown wakes it, the wake reaches the (shut down)
//! scheduler, which drops the `Runnable` and with it the future.
//!
//! # Invariants
//!
//! - An entry is inserted under its shard's lock *before* the task can run,
//!   and removed by the task's own future wrapper when the future is dropped
//!   (completion or cancellation), exactly once.
//! - `close` takes every waker out under the lock and marks each shard
//!   closed; later inserts fail (the spawn yields a cancelled task) and later
//!   removals are no-ops. Wakers are woken after the lock is released,
//!   because waking drops futures, whose wrappers lock the shard again.
//!
//! Shards: `4 × workers`, rounded up to a power of two. A worker inserts
//! into its own shard; other threads go round-robin over all shards. The
//! cost is one (mostly uncontended) lock per spawn and one per completion.

use std::cell::Cell;
use std::task::Waker;

use crossbeam_utils::CachePadded;

use crate::loom::sync::Mutex;

/// Where a task's entry lives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryKey {
    shard: u32,
    slot: u32,
}

#[derive(Default)]
struct Shard {
    slots: Vec<Option<Waker>>,
    free: Vec<u32>,
    live: usize,
    spawned_remote: u64,
    closed: bool,
}

pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
}

/// The spawner, for choosing a shard and counting remote spawns.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Spawner {
    Worker(usize),
    Remote,
}

thread_local! {
    static REMOTE_SHARD: Cell<usize> = const { Cell::new(0) };
}

impl Registry {
    pub(crate) fn new(num_workers: usize) -> Registry {
        let n = (num_workers * 4).next_power_of_two();
        Registry {
            shards: (0..n)
                .map(|_| CachePadded::new(Mutex::new(Shard::default())))
                .collect(),
        }
    }

    fn shard_for(&self, spawner: Spawner) -> usize {
        let n = self.shards.len();
        match spawner {
            Spawner::Worker(index) => index % n,
            // Round-robin per outside thread: a burst of remote spawns
            // spreads over every shard instead of making the spawner and
            // the workers completing its tasks fight over one lock.
            Spawner::Remote => REMOTE_SHARD.with(|next| {
                let shard = next.get().wrapping_add(1);
                next.set(shard);
                shard % n
            }),
        }
    }

    /// Reserves an entry, builds the task with its key, and stores the
    /// waker `make` returns. `None` when the registry is closed.
    pub(crate) fn insert<R>(
        &self,
        spawner: Spawner,
        make: impl FnOnce(EntryKey) -> (R, Waker),
    ) -> Option<R> {
        let shard_index = self.shard_for(spawner);
        let mut shard = self.shards[shard_index].lock().unwrap();
        if shard.closed {
            return None;
        }
        let slot = match shard.free.pop() {
            Some(slot) => slot,
            None => {
                shard.slots.push(None);
                (shard.slots.len() - 1) as u32
            }
        };
        let key = EntryKey {
            shard: shard_index as u32,
            slot,
        };
        let (result, waker) = make(key);
        shard.slots[slot as usize] = Some(waker);
        shard.live += 1;
        if let Spawner::Remote = spawner {
            shard.spawned_remote += 1;
        }
        Some(result)
    }

    /// Removes an entry (the task's future is being dropped).
    pub(crate) fn remove(&self, key: EntryKey) {
        let waker = {
            let mut shard = self.shards[key.shard as usize].lock().unwrap();
            if shard.closed {
                return;
            }
            shard.live -= 1;
            shard.free.push(key.slot);
            shard.slots[key.slot as usize].take()
        };
        // Dropped outside the lock: it is this task's own waker, whose drop
        // never reaches the registry, but keep the critical section minimal.
        drop(waker);
    }

    /// Closes every shard and returns the wakers of the tasks still alive.
    pub(crate) fn close(&self) -> Vec<Waker> {
        let mut wakers = Vec::new();
        for shard in self.shards.iter() {
            let mut shard = shard.lock().unwrap();
            shard.closed = true;
            shard.live = 0;
            shard.free.clear();
            wakers.extend(shard.slots.drain(..).flatten());
        }
        wakers
    }

    /// Tasks spawned and not yet finished.
    pub(crate) fn live(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().live).sum()
    }

    /// Tasks spawned from outside the workers.
    pub(crate) fn spawned_remote(&self) -> u64 {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap().spawned_remote)
            .sum()
    }
}
