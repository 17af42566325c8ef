//! The `#[weft::main]` and `#[weft::test]` attribute macros.
//!
//! Use them through `weft` (`weft::main`, `weft::test`), not from this
//! crate: the code they write names `::weft::...`, so the crate using them
//! must depend on `weft`.
//!
//! Both turn an `async fn` into a plain one that builds a multi-thread
//! runtime and blocks on the original body:
//!
//! ```text
//! #[weft::main(worker_threads = 4)]          fn main() -> R {
//! async fn main() -> R {             ==>         let body = async move { BODY };
//!     BODY                                       weft::runtime::Builder::new_multi_thread()
//! }                                                  .worker_threads(4)
//!                                                    .build()
//!                                                    .expect("failed to build the weft runtime")
//!                                                    .block_on(body)
//!                                            }
//! ```
//!
//! `#[weft::test]` does the same and adds `#[test]`; the function's other
//! attributes (`#[should_panic]`, `#[ignore]`, doc comments) are kept.
//! `tokio_compat = true` (both) wraps the builder in
//! `weft::__weft_tokio_compat!(...)`, which calls `Builder::tokio_compat`,
//! or is a `compile_error!` when weft is built without `tokio-compat`.
//!
//! `flavor = "current_thread"` builds with `Builder::new_current_thread()`
//! instead (and refuses `worker_threads`); `flavor = "multi_thread"` is
//! the default.
//!
//! Names and meaning follow tokio's macros. The differences: tests default
//! to the multi-thread runtime too (tokio's tests default to a
//! current-thread runtime: write `flavor = "current_thread"` for that),
//! and `start_paused` is accepted on either flavor (tokio's needs the
//! current-thread one).
//!
//! Misuse is a compile error on the token to change, saying what to write
//! instead: a function without `async`, arguments on the function, an
//! unknown or repeated argument, a `flavor` other than `"current_thread"`
//! and `"multi_thread"`, `worker_threads` with the current-thread flavor,
//! `worker_threads = 0` or a
//! `worker_threads` that is not an integer literal, `start_paused` on
//! `main`, `start_paused` without weft's `test-util` feature,
//! `tokio_compat` without weft's `tokio-compat` feature, and a
//! `#[test]` written next to `#[weft::test]`. `weft/tests/ui/` shows every
//! message.

use proc_macro::TokenStream;

mod args;
mod expand;

use args::Kind;

/// (`weft-macros` writes this code; it names `::weft`, so the crate using
/// the attribute must depend on `weft`.)
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Main, args.into(), item.into()).into()
}

/// (`weft-macros` writes this code; it names `::weft`, so the crate using
/// the attribute must depend on `weft`. `start_paused = true` expands to
/// `weft::__weft_start_paused!()`, which pauses the clock, or is a
/// `compile_error!` when weft is built without `test-util`.)
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(Kind::Test, args.into(), item.into()).into()
}

#[cfg(test)]
mod tests;
