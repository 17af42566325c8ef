//! The compile errors that need weft *without* a feature, which weft's own
//! UI cases (`weft/tests/macros_ui.rs`) cannot show: its tests turn every
//! feature on. Here weft is a dev-dependency with none, so
//! `tokio_compat = true`, and `Builder::tokio_compat()` called by hand,
//! meet the missing `tokio-compat` feature, and the message must name it. (Only `#[weft::main]` is a case: trybuild checks
//! a case as a binary, where a `#[weft::test]` function is compiled out;
//! both attributes expand the argument the same way, `src/tests.rs`.)
//!
//! After changing a message: `TRYBUILD=overwrite cargo test -p weft-macros
//! --test ui`, then read the new `.stderr` files.

#[test]
fn an_argument_whose_feature_is_off_is_a_compile_error_naming_the_feature() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
