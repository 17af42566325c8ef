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

use std::cell::Cell;
use std::task::Waker;

use crossbeam_utils::CachePadded;

use crate::sync::Mutex;

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
    closed: bool,
}

pub(crate) struct Registry {
    shards: Box<[CachePadded<Mutex<Shard>>]>,
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
        }
    }

    fn shard_for(&self, worker: Option<usize>) -> usize {
        let n = self.shards.len();
        match worker {
            // `n` is above every worker index, so this is the index itself;
            // any shard would be correct (a key remembers its shard), only
            // contended: `/` (shard 0 for all) is a performance-only mutant.
            Some(index) => index % n,
            None => NEXT_SHARD.with(|next| {
                let shard = next.get().wrapping_add(1);
                next.set(shard);
                shard % n
            }),
        }
    }

    /// Registers an idle-capable task by its waker. `worker` is the worker
    /// polling it, if any (its shard is then uncontended).
    pub(crate) fn insert(&self, worker: Option<usize>, waker: Waker) -> Result<EntryKey, Closed> {
        let shard_index = self.shard_for(worker);
        let mut shard = self.shards[shard_index].lock().unwrap();
        if shard.closed {
            return Err(Closed);
        }
        let slot = match shard.free.pop() {
            Some(slot) => {
                shard.slots[slot as usize] = Some(waker);
                slot
            }
            None => {
                shard.slots.push(Some(waker));
                (shard.slots.len() - 1) as u32
            }
        };
        Ok(EntryKey {
            shard: shard_index as u32,
            slot,
        })
    }

    /// Removes an entry (the task's future is being dropped).
    pub(crate) fn remove(&self, key: EntryKey) {
        let waker = {
            let mut shard = self.shards[key.shard as usize].lock().unwrap();
            if shard.closed {
                return;
            }
            shard.free.push(key.slot);
            shard.slots[key.slot as usize].take()
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
            wakers.extend(shard.slots.drain(..).flatten());
        }
        wakers
    }
}
