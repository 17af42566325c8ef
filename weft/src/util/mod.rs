//! Support code with no runtime in it: the std-or-loom facade every atomic,
//! cell and thread goes through (`loom`), the runtime's counted locks
//! (`locks`) and the graceful drain's protocol (`drain`).

#[cfg(all(feature = "hyper", any(not(loom), test)))]
pub(crate) mod drain;
pub(crate) mod locks;
pub(crate) mod loom;
