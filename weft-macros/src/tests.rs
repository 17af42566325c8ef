//! The expansion as tokens: what must be kept or added that a run-time test
//! cannot see without running a test that must not run (`#[ignore]`).

use quote::quote;

use crate::args::Kind;
use crate::expand::expand;

/// The expansion as text, spaces removed so the assertions do not depend
/// on how tokens are printed.
fn expanded(kind: Kind, args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    expand(kind, args, item).to_string().replace(' ', "")
}

#[test]
fn a_test_gets_test_first_and_keeps_ignore_and_should_panic() {
    let out = expanded(
        Kind::Test,
        quote!(),
        quote! {
            #[ignore = "slow"]
            #[should_panic(expected = "boom")]
            async fn checks() { panic!("boom") }
        },
    );
    let test = out
        .find("#[::core::prelude::v1::test]")
        .expect("no #[test] added");
    let ignore = out.find("#[ignore=\"slow\"]").expect("#[ignore] dropped");
    let should_panic = out
        .find("#[should_panic(expected=\"boom\")]")
        .expect("#[should_panic] dropped");
    assert!(test < ignore && ignore < should_panic, "{out}");
    assert!(!out.contains("asyncfnchecks"), "still async: {out}");
}

#[test]
fn main_passes_worker_threads_to_the_builder_and_keeps_its_return_type() {
    let out = expanded(
        Kind::Main,
        quote!(worker_threads = 3),
        quote! { async fn main() -> Result<(), String> { Ok(()) } },
    );
    assert!(out.starts_with("fnmain()->Result<(),String>"), "{out}");
    assert!(out.contains(".worker_threads(3usize)"), "{out}");
    assert!(!out.contains("test"), "main became a test: {out}");
}

#[test]
fn start_paused_true_pauses_and_false_does_not() {
    let item = quote! { async fn checks() {} };
    let paused = expanded(Kind::Test, quote!(start_paused = true), item.clone());
    assert!(
        paused.contains("::weft::__weft_start_paused!()"),
        "{paused}"
    );
    let running = expanded(Kind::Test, quote!(start_paused = false), item);
    assert!(!running.contains("__weft_start_paused"), "{running}");
}

#[test]
fn an_error_leaves_a_synchronous_stand_in_with_the_same_signature() {
    let out = expanded(
        Kind::Main,
        quote!(worker_threads = 0),
        quote! { async fn main() -> u8 { 1 } },
    );
    assert!(out.contains("compile_error!"), "{out}");
    assert!(
        out.contains("fnmain()->u8{::core::unreachable!()}"),
        "{out}"
    );
}

#[test]
fn tokio_compat_true_wraps_the_builder_and_false_does_not() {
    let item = quote! { async fn main() {} };
    for kind in [Kind::Main, Kind::Test] {
        let bridged = expanded(
            kind,
            quote!(tokio_compat = true, worker_threads = 2),
            item.clone(),
        );
        assert!(
            bridged.contains(
                "::weft::__weft_tokio_compat!(::weft::runtime::Builder::new_multi_thread().worker_threads(2usize)).build()"
            ),
            "{bridged}"
        );
        let plain = expanded(kind, quote!(tokio_compat = false), item.clone());
        assert!(!plain.contains("tokio_compat"), "{plain}");
    }
}

#[test]
fn flavor_current_thread_builds_a_current_thread_runtime() {
    let out = expanded(
        Kind::Test,
        quote!(flavor = "current_thread"),
        quote! { async fn checks() {} },
    );
    assert!(out.contains("Builder::new_current_thread()"), "{out}");
    assert!(!out.contains("new_multi_thread"), "{out}");
    let default = expanded(Kind::Test, quote!(), quote! { async fn checks() {} });
    assert!(default.contains("Builder::new_multi_thread()"), "{default}");
}
