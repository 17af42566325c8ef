//! Without the `tokio-compat` feature (or under loom): the same names,
//! doing nothing, so the threads that enter the bridge need no `cfg`.

use std::io;
use std::marker::PhantomData;
use std::time::Instant;

use crate::runtime::scheduler::Shared;
use crate::util::loom::sync::Arc;

/// No tokio runtime to enter.
pub(crate) struct TokioContext;

/// Entered nothing. Not `Send`, as the real one.
pub(crate) struct TokioGuard<'a>(PhantomData<(&'a (), std::sync::MutexGuard<'static, ()>)>);

impl TokioContext {
    pub(crate) fn none() -> TokioContext {
        TokioContext
    }

    #[inline]
    pub(crate) fn enter(&self) -> TokioGuard<'_> {
        TokioGuard(PhantomData)
    }
}

/// Never exists without the feature.
pub(crate) enum TokioThread {}

/// Starts nothing: `Builder::tokio_compat` does not exist without the
/// feature, and under loom no runtime asks for it.
pub(crate) fn start(_enabled: bool) -> io::Result<(Option<TokioThread>, TokioContext)> {
    Ok((None, TokioContext::none()))
}

// Its methods' bodies made `()` (mutants) are equivalent: a type with no
// values is never called. (The tests build with the feature, so this file
// is judged by `cargo check -p weft --lib`, where the other mutants fail.)
impl TokioThread {
    pub(crate) fn set_weft(&mut self, _shared: Arc<Shared>) {
        match *self {}
    }

    pub(crate) fn stop(self, _deadline: Option<Instant>) {
        match self {}
    }
}
