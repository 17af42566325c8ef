//! What names a task in a stall report: its name and its spawn location.
//!
//! Both are `'static` so that the stall monitor may read them while the
//! task runs on another thread, without a reference count per poll and
//! without racing the task's end: a worker publishes the label of the task
//! it polls (`scheduler/monitor.rs`) and the monitor can read it even if
//! the task has completed and been freed meanwhile. Spawn locations are
//! `'static` already (`#[track_caller]`); names are interned: each distinct
//! name is leaked once and reused, so use a bounded set of names (a
//! handler's name, not a request id).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// An interned task name: a thin pointer, so a worker can publish it in
/// one atomic word.
#[derive(Debug)]
pub(crate) struct TaskName(pub(crate) Box<str>);

/// The interned copy of `name`.
pub(crate) fn intern(name: &str) -> &'static TaskName {
    static NAMES: OnceLock<Mutex<HashMap<&'static str, &'static TaskName>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&found) = names.get(name) {
        return found;
    }
    let interned: &'static TaskName = Box::leak(Box::new(TaskName(name.into())));
    names.insert(&interned.0, interned);
    interned
}
