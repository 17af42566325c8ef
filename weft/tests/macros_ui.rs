//! The compile errors of `#[weft::main]` and `#[weft::test]`: each case in
//! `tests/ui/fail/` is a misuse, and its `.stderr` is the message the user
//! sees (it must point at the token to change and say what to write). The
//! cases in `tests/ui/pass/` build and run.
//!
//! After changing a message: `TRYBUILD=overwrite cargo test -p weft --test
//! macros_ui`, then read the new `.stderr` files.
//!
//! `start_paused` without the `test-util` feature and `tokio_compat`
//! without `tokio-compat` cannot be cases here: weft's own tests turn those
//! features on. The second is a case of `weft-macros/tests/ui.rs`, which
//! builds weft without features; the macros' docs state the first's
//! message.

#[test]
fn macro_misuse_is_a_compile_error_saying_what_to_write() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
