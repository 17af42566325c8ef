//! What names a task in a stall report: its name and its spawn location,
//! packed in one word ([`Label`]).
//!
//! Both parts are `'static` so that the stall monitor may read them while
//! the task runs on another thread, without a reference count per poll and
//! without racing the task's end: a worker publishes the label of the task
//! it polls (`scheduler/monitor.rs`) and the monitor can decode it even if
//! the task has completed and been freed meanwhile. Spawn locations are
//! `'static` already (`#[track_caller]`); a named task's label points to an
//! interned (name, location) pair: each distinct pair is leaked once and
//! reused, so use a bounded set of names (a handler's name, not a request
//! id).
//!
//! One word because it lives in every task's header: the header's size
//! decides the allocator's size class, and a task that outgrows glibc's
//! fast bins (chunks up to 128 bytes) costs every spawn and free a lock
//! (spawn_many_local 1.7 → 3.0 ms per iteration with a 32-byte header
//! record instead of 8; checked by turning fast bins off on the old build:
//! the same 2.9 ms).
//!
//! Mutation run of this file, `lane.rs`, `builder.rs` and `yield_now.rs`
//! (2026-11-25, `MUTANTS_JUDGE=tests MUTANTS_TESTS=lib,lanes,spawn,metrics`,
//! 72 mutants): 46 caught, 18 unviable, 8 survived; five are killed by
//! the unit tests of this file and `lane.rs` (an empty word decoding to a
//! label; a `Latency` or `Batch` task demoted), three are equivalent
//! (`|` and `^` on bits known clear, said at the code).

use std::collections::HashMap;
use std::panic::Location;
use std::sync::{Mutex, OnceLock};

/// Low bits of a label word that are not the pointer (`Location` and
/// `NamedLabel` are 8-byte aligned). Bit 0: the pointer is a
/// `NamedLabel`; bits 1-2 are left to the owner (a task's lane).
pub(crate) const TAG_BITS: usize = 0b111;
const NAMED: usize = 0b1;

/// An interned (name, spawn location) pair.
struct NamedLabel {
    name: Box<str>,
    spawned_at: &'static Location<'static>,
}

/// A task's name (if any) and spawn location, as one word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

impl Label {
    /// The label of an unnamed task spawned at `spawned_at`.
    pub(crate) fn unnamed(spawned_at: &'static Location<'static>) -> Label {
        let bits = std::ptr::from_ref(spawned_at) as usize;
        debug_assert_eq!(bits & TAG_BITS, 0, "`Location` is 8-byte aligned");
        Label(bits)
    }

    /// The label of a task named `name` spawned at `spawned_at` (interned).
    pub(crate) fn named(name: &str, spawned_at: &'static Location<'static>) -> Label {
        type Key = (Box<str>, usize);
        static NAMED_LABELS: OnceLock<Mutex<HashMap<Key, &'static NamedLabel>>> = OnceLock::new();
        let mut labels = NAMED_LABELS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let location = std::ptr::from_ref(spawned_at) as usize;
        let label = *labels.entry((name.into(), location)).or_insert_with(|| {
            Box::leak(Box::new(NamedLabel {
                name: name.into(),
                spawned_at,
            }))
        });
        let bits = std::ptr::from_ref(label) as usize;
        debug_assert_eq!(bits & TAG_BITS, 0, "`NamedLabel` is 8-byte aligned");
        // The pointer's tag bits are clear: `|` here, and in `from_bits`
        // `TAG_BITS & !NAMED`, equal their `^` mutants (equivalent).
        Label(bits | NAMED)
    }

    /// The label in a word made by [`bits`](Self::bits), tag bits beyond
    /// `NAMED` ignored. `None` for 0 (no label published).
    pub(crate) fn from_bits(bits: usize) -> Option<Label> {
        let bits = bits & !(TAG_BITS & !NAMED);
        (bits & !NAMED != 0).then_some(Label(bits))
    }

    pub(crate) fn bits(self) -> usize {
        self.0
    }

    fn named_label(self) -> Option<&'static NamedLabel> {
        if self.0 & NAMED == 0 {
            return None;
        }
        let ptr = (self.0 & !TAG_BITS) as *const NamedLabel;
        // SAFETY: a `NAMED` word is only made by `Label::named` from a
        // leaked, never freed `NamedLabel`.
        Some(unsafe { &*ptr })
    }

    pub(crate) fn name(self) -> Option<&'static str> {
        self.named_label().map(|label| &*label.name)
    }

    pub(crate) fn spawned_at(self) -> &'static Location<'static> {
        match self.named_label() {
            Some(label) => label.spawned_at,
            None => {
                let ptr = (self.0 & !TAG_BITS) as *const Location<'static>;
                // SAFETY: an unnamed word is only made by `Label::unnamed`
                // from a `&'static Location`.
                unsafe { &*ptr }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::panic::Location;

    use super::{Label, TAG_BITS};

    /// A word with no label (0, what a worker publishes between polls)
    /// decodes to none; a label's word decodes to it, whatever the tag
    /// bits its owner added.
    #[test]
    fn words_decode_to_their_label_or_none() {
        assert!(Label::from_bits(0).is_none());
        assert!(Label::from_bits(TAG_BITS & !1).is_none(), "tag bits alone");
        let here = Location::caller();
        for label in [Label::unnamed(here), Label::named("a handler", here)] {
            for tags in [0, 0b010, 0b100, 0b110] {
                let decoded = Label::from_bits(label.bits() | tags).expect("a label");
                assert!(decoded == label);
                assert_eq!(decoded.spawned_at(), here);
            }
        }
        assert_eq!(Label::named("a handler", here).name(), Some("a handler"));
        assert_eq!(Label::unnamed(here).name(), None);
    }
}
