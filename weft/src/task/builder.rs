//! `task::Builder`: spawn a task with a lane and a name (tokio's shape).

use std::future::Future;
use std::io;
use std::panic::Location;

use super::{JoinHandle, Lane};
use crate::runtime::Handle;
use crate::runtime::context;
use crate::runtime::{Label, SpawnOptions};

/// Spawns a task with settings: its [`Lane`] and a name that stall reports
/// ([`StallInfo`](crate::runtime::StallInfo)) show.
///
/// `weft::spawn` and `Handle::spawn` are `Builder::new().spawn(..)` with
/// the `Default` lane and no name.
///
/// ```
/// use weft::task::{Builder, Lane};
///
/// let rt = weft::runtime::Runtime::new().unwrap();
/// // From outside the runtime, through its handle:
/// let report = Builder::new()
///     .lane(Lane::Batch)
///     .name("nightly-report")
///     .spawn_on(async { (1..=10u64).product::<u64>() }, rt.handle())
///     .unwrap();
/// assert_eq!(rt.block_on(report).unwrap(), 3_628_800);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Builder<'a> {
    lane: Lane,
    name: Option<&'a str>,
}

impl<'a> Builder<'a> {
    /// A builder for a `Default`-lane task without a name.
    pub fn new() -> Builder<'a> {
        Builder::default()
    }

    /// The lane the task runs in. Default: [`Lane::Default`].
    pub fn lane(self, lane: Lane) -> Builder<'a> {
        Builder { lane, ..self }
    }

    /// The task's name. Names are interned (each distinct name is stored
    /// once for the life of the process): use a bounded set of names, not
    /// one per request.
    pub fn name(self, name: &'a str) -> Builder<'a> {
        Builder {
            name: Some(name),
            ..self
        }
    }

    /// Spawns the task on the current runtime.
    ///
    /// # Errors
    ///
    /// None today; the `io::Result` is tokio's signature, kept so code
    /// written for `tokio::task::Builder` compiles unchanged.
    ///
    /// # Panics
    ///
    /// Outside a runtime context, like [`crate::spawn`]; use
    /// [`spawn_on`](Self::spawn_on) with a [`Handle`] from any thread.
    #[track_caller]
    pub fn spawn<F>(self, future: F) -> io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let options = self.options(Location::caller());
        let spawned = context::with_current(|shared| {
            shared.map(|shared| crate::runtime::spawn_on(shared, future, options))
        });
        match spawned {
            Some(join) => Ok(join),
            None => crate::runtime::context::no_runtime(format_args!(
                "`weft::task::Builder::spawn` called outside of a weft runtime: call it from a \
                 task, inside `Runtime::block_on`, or while a `Runtime::enter` guard is alive; \
                 or use `Builder::spawn_on` with a `weft::runtime::Handle` from any thread"
            )),
        }
    }

    /// Spawns the task on the runtime behind `handle`, from any thread.
    ///
    /// # Errors
    ///
    /// None today (see [`spawn`](Self::spawn)).
    #[track_caller]
    pub fn spawn_on<F>(self, future: F, handle: &Handle) -> io::Result<JoinHandle<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let options = self.options(Location::caller());
        Ok(crate::runtime::spawn_on(&handle.shared, future, options))
    }

    fn options(&self, spawned_at: &'static Location<'static>) -> SpawnOptions {
        let label = match self.name {
            Some(name) => Label::named(name, spawned_at),
            None => Label::unnamed(spawned_at),
        };
        SpawnOptions {
            lane: self.lane,
            label,
        }
    }
}
