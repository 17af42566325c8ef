//! Task ids (tokio's `task::Id`): unique among the tasks of the process,
//! never reused, and the id of the task running on this thread.
//!
//! # Invariants
//!
//! - Correctness: no two tasks of the process get the same id. Ids come
//!   from one process-wide counter, taken by blocks of [`BLOCK`]: a
//!   thread hands out the ids of its block, one per spawn, and takes a new
//!   block when it runs out. Each block is a `fetch_add` on the counter,
//!   so blocks never overlap (a 64-bit counter does not wrap).
//! - Speed: a spawn takes no shared cache line (one `fetch_add` per
//!   [`BLOCK`] spawns per thread), so spawners on many cores do not bounce
//!   the counter between them. The cost: ids of tasks spawned from
//!   different threads are not in spawn order (tokio promises no order
//!   either).
//! - The current task's id is a thread-local set around each poll of a
//!   task and around the drop of its future (`TaskFuture`), the previous
//!   value put back after (a task polled inside another's poll, as a
//!   `LocalSet` does, sees its own).

use std::cell::Cell;
use std::fmt;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids a thread takes from the process-wide counter at once.
const BLOCK: u64 = 1024;

/// An opaque identifier of a task, unique among the tasks of this process
/// for its whole life (tokio's `task::Id`).
///
/// ```
/// let rt = weft::runtime::Runtime::new()?;
/// let handle = rt.spawn(async { weft::task::id() });
/// let id = handle.id();
/// assert_eq!(rt.block_on(handle)?, id);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Hash, Eq, PartialEq, PartialOrd, Ord)]
pub struct Id(NonZeroU64);

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

thread_local! {
    /// The next id of this thread's block, and the end of the block.
    static BLOCK_LEFT: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    /// The id of the task being polled (or dropped) on this thread.
    static CURRENT: Cell<Option<Id>> = const { Cell::new(None) };
}

impl Id {
    /// A new id, never given before in this process.
    pub(crate) fn next() -> Id {
        let id = BLOCK_LEFT
            .try_with(|block| {
                let (mut next, mut end) = block.get();
                if next == end {
                    (next, end) = take_block();
                }
                block.set((next + 1, end));
                next
            })
            // During thread-local destruction: one id alone.
            .unwrap_or_else(|_| take_block().0);
        Id(NonZeroU64::new(id).expect("task ids start at 1"))
    }
}

/// A new block of ids: `(first, end)`.
#[cold]
fn take_block() -> (u64, u64) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let first = NEXT.fetch_add(BLOCK, Ordering::Relaxed);
    (first, first + BLOCK)
}

/// The id of the task running on this thread, if any.
pub(crate) fn current() -> Option<Id> {
    CURRENT.try_with(Cell::get).ok().flatten()
}

/// Makes `id` the current task's until the guard drops.
#[inline]
pub(crate) fn enter(id: Id) -> IdGuard {
    IdGuard {
        previous: CURRENT
            .try_with(|current| current.replace(Some(id)))
            .ok()
            .flatten(),
    }
}

/// Puts the previous current id back on drop.
pub(crate) struct IdGuard {
    previous: Option<Id>,
}

impl Drop for IdGuard {
    #[inline]
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|current| current.set(self.previous));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::collections::HashSet;

    use super::{BLOCK, Id, current, enter};

    /// Ids from several threads, across several blocks each, never repeat.
    #[test]
    fn ids_from_many_threads_are_unique() {
        let per_thread = (BLOCK * 3 + 7) as usize;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || (0..per_thread).map(|_| Id::next()).collect::<Vec<_>>())
            })
            .collect();
        let mut seen = HashSet::new();
        for thread in threads {
            for id in thread.join().unwrap() {
                assert!(seen.insert(id), "{id} given twice");
            }
        }
        assert_eq!(seen.len(), 4 * per_thread);
    }

    #[test]
    fn the_current_id_nests() {
        let (outer, inner) = (Id::next(), Id::next());
        assert_eq!(current(), None);
        let _outer = enter(outer);
        {
            let _inner = enter(inner);
            assert_eq!(current(), Some(inner));
        }
        assert_eq!(current(), Some(outer));
    }
}
