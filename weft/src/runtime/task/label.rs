//! What names a task in a stall report: its name and its spawn location,
//! packed in one word ([`Label`]).
//!
//! Both parts are `'static` so that the stall monitor may read them while
//! the task runs on another thread, without a reference count per poll and
//! without racing the task's end: a worker publishes the label of the task
//! it polls (`runtime/scheduler/monitor.rs`) and the monitor can decode it even if
//! the task has completed and been freed meanwhile. Spawn locations are
//! `'static` already (`#[track_caller]`); a named task's label points to an
//! interned (name, location) pair: each distinct pair is leaked once and
//! reused, so use a bounded set of names (a handler's name, not a request
//! id). Where a `Location` is less than 8-byte aligned (32-bit targets)
//! an unnamed task's location is interned the same way, for the tag bits
//! (a lock per spawn there).
//!
//! One word because it lives in every task's header: the header's size
//! decides the allocator's size class, and a task that outgrows glibc's
//! fast bins (chunks up to 128 bytes) costs every spawn and free a lock (a
//! speed rule, not correctness).
//! Measured: docs/experiments.md#task-header-size
//!
//! Decoding is pinned by `words_decode_to_their_label_or_none` (below).

use std::collections::HashMap;
use std::panic::Location;
use std::sync::OnceLock;

use crate::util::locks::StdMutex as Mutex;

/// Low bits of a label word that are not the pointer. Bit 0: the pointer
/// is an [`Interned`] label; bits 1-2 are left to the owner (a task's
/// lane). So every pointer in a label is 8-byte aligned: an `Interned` is
/// by its `repr`, a `Location` where its own alignment (a pointer's) is 8,
/// and elsewhere (32-bit targets) a location is interned too.
pub(crate) const TAG_BITS: usize = 0b111;
const INTERNED: usize = 0b1;

/// Whether a `&'static Location` can stand in a label word as it is.
const LOCATION_FITS: bool = std::mem::align_of::<Location<'static>>() > TAG_BITS;

/// An interned (name, spawn location) pair; leaked once per distinct pair.
#[repr(align(8))]
struct Interned {
    name: Option<Box<str>>,
    spawned_at: &'static Location<'static>,
}

const _: () = assert!(
    std::mem::align_of::<Interned>() > TAG_BITS,
    "a label's tag bits need 8-byte aligned pointers"
);

/// A task's name (if any) and spawn location, as one word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

impl Label {
    /// The label of an unnamed task spawned at `spawned_at`.
    pub(crate) fn unnamed(spawned_at: &'static Location<'static>) -> Label {
        if LOCATION_FITS {
            Label(std::ptr::from_ref(spawned_at) as usize)
        } else {
            Label::interned(None, spawned_at)
        }
    }

    /// The label of a task named `name` spawned at `spawned_at` (interned).
    pub(crate) fn named(name: &str, spawned_at: &'static Location<'static>) -> Label {
        Label::interned(Some(name), spawned_at)
    }

    /// The label of `(name, spawned_at)` through an [`Interned`] pair.
    fn interned(name: Option<&str>, spawned_at: &'static Location<'static>) -> Label {
        type Key = (Option<Box<str>>, usize);
        static INTERNED_LABELS: OnceLock<Mutex<HashMap<Key, &'static Interned>>> = OnceLock::new();
        let mut labels = INTERNED_LABELS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let location = std::ptr::from_ref(spawned_at) as usize;
        let label = *labels
            .entry((name.map(Into::into), location))
            .or_insert_with(|| {
                Box::leak(Box::new(Interned {
                    name: name.map(Into::into),
                    spawned_at,
                }))
            });
        // The pointer's tag bits are clear (the assertion above): `|` here,
        // and in `from_bits` `TAG_BITS & !INTERNED`, equal their `^`
        // mutants (equivalent).
        Label(std::ptr::from_ref(label) as usize | INTERNED)
    }

    /// The label in a word made by [`bits`](Self::bits), tag bits beyond
    /// `INTERNED` ignored. `None` for 0 (no label published).
    pub(crate) fn from_bits(bits: usize) -> Option<Label> {
        let bits = bits & !(TAG_BITS & !INTERNED);
        (bits & !INTERNED != 0).then_some(Label(bits))
    }

    pub(crate) fn bits(self) -> usize {
        self.0
    }

    fn interned_label(self) -> Option<&'static Interned> {
        if self.0 & INTERNED == 0 {
            return None;
        }
        let ptr = (self.0 & !TAG_BITS) as *const Interned;
        // Sound: an `INTERNED` word is only made by `Label::interned`, from
        // a leaked, never freed, 8-byte aligned `Interned` (its tag bits
        // clear, so masking them gives the pointer back). `from_bits`, a
        // safe function, takes any word: its callers (`LaneAndLabel`,
        // `PollWatch::label`) pass only words from `bits()` or 0. On the
        // monitor thread the `Interned` made by another thread is visible
        // through `PollWatch::begin`'s Release fence and `label`'s Acquire
        // fence (and the interning mutex, for the thread that made it).
        // SAFETY: `ptr` is a leaked, never freed `Interned` (argued above).
        Some(unsafe { &*ptr })
    }

    pub(crate) fn name(self) -> Option<&'static str> {
        self.interned_label()
            .and_then(|label| label.name.as_deref())
    }

    pub(crate) fn spawned_at(self) -> &'static Location<'static> {
        match self.interned_label() {
            Some(label) => label.spawned_at,
            None => {
                let ptr = (self.0 & !TAG_BITS) as *const Location<'static>;
                // Sound: a word without `INTERNED` is only made by
                // `Label::unnamed` from a `&'static Location`, and only
                // where `LOCATION_FITS` (its tag bits clear); `from_bits`'s
                // callers pass only such words or 0 (see above).
                // SAFETY: `ptr` is a `&'static Location` (argued above).
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
        // The path 32-bit targets take for every unnamed task.
        let interned = Label::interned(None, here);
        assert_eq!(interned.name(), None);
        assert_eq!(interned.spawned_at(), here);
        assert!(interned == Label::interned(None, here), "interned once");
        assert!(Label::from_bits(interned.bits() | 0b110).unwrap() == interned);
        assert_eq!(Label::unnamed(here).name(), None);
    }
}
