//! One switch between `std` and `loom` for every atomic, cell and thread
//! the scheduler uses. Locks are `crate::util::locks`'s, which wraps `std`'s or
//! loom's the same way and counts them (no user code under a runtime
//! lock): this facade does not export `std`'s.
//!
//! The state of every modelled protocol (queues, the sleep/wake protocol,
//! the task cell and registry, timer keeping, readiness, the first
//! registration's handshake with the keeper, the monitor's sleep and its
//! hand-back queue) imports from here, so that `RUSTFLAGS="--cfg loom"`
//! swaps it onto loom's model-checked primitives. `UnsafeCell` is wrapped so that both
//! backends expose loom's closure-based `with`/`with_mut` access: loom then
//! checks every access to the cell for data races.
//!
//! `std` atomics remain where loom states would buy nothing: counters and
//! values that are only sampled (metrics, the monitor's poll watches, a
//! task's lane word), `block_on`'s one-word flag, the paused test clock
//! (`test-util`) and the signal counters.

#[cfg(not(loom))]
pub(crate) mod std_backend {
    pub(crate) mod sync {
        pub(crate) use std::sync::Arc;

        pub(crate) mod atomic {
            pub(crate) use std::sync::atomic::{
                AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence,
            };
        }
    }

    pub(crate) mod cell {
        /// `std::cell::UnsafeCell` with loom's access API.
        #[derive(Debug)]
        pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

        impl<T> UnsafeCell<T> {
            pub(crate) const fn new(value: T) -> Self {
                Self(std::cell::UnsafeCell::new(value))
            }

            #[inline(always)]
            pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
                f(self.0.get())
            }

            #[inline(always)]
            pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
                f(self.0.get())
            }
        }
    }
}

#[cfg(not(loom))]
pub(crate) use std_backend::*;

#[cfg(loom)]
pub(crate) use loom::{cell, sync};
