//! Support code with no runtime in it: the std-or-loom facade every atomic,
//! cell and thread goes through (`loom`), the runtime's counted locks
//! (`locks`), the graceful drain's protocol (`drain`), and the loom models'
//! helpers (`loom_support`).

#[cfg(all(feature = "hyper", any(not(loom), test)))]
pub(crate) mod drain;
pub(crate) mod locks;
pub(crate) mod loom;
#[cfg(all(test, loom))]
pub(crate) mod loom_support;
