//! `tokio::sync`: tokio's own channels, locks, `Notify`, semaphores,
//! `OnceCell` and `watch`, compiled from tokio's release
//! (`weft-tokio-upstream`). They need no runtime: their wakers are weft's.
//! Without tokio's runtime they consume no cooperative budget.

pub use tokio_upstream::sync::*;
