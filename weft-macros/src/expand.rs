//! Checking the annotated function and writing it back as a synchronous
//! function that builds a runtime and blocks on the original body.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, ItemFn, ReturnType};

use crate::args::{self, Config, Flavor, Kind};

/// The whole expansion of `#[weft::main(args)]` or `#[weft::test(args)]`
/// on `item`. Never fails: errors come back as `compile_error!` tokens.
pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            // Not a function at all: say so, and give the item back so the
            // rest of the crate still resolves names it defines.
            let error = syn::Error::new_spanned(
                &item,
                format!("`{}` goes on an `async fn`", kind.attribute()),
            );
            return with_error(error, item);
        }
    };
    // Report the signature's problems and the arguments' together, so a
    // user fixes both in one round.
    let config = args::parse(kind, args);
    let checked = check_signature(kind, &function);
    match (config, checked) {
        (Ok(config), Ok(())) => rewrite(kind, &config, function),
        (Err(mut error), Err(more)) => {
            error.combine(more);
            fallback(kind, function, error)
        }
        (Err(error), _) | (_, Err(error)) => fallback(kind, function, error),
    }
}

fn check_signature(kind: Kind, function: &ItemFn) -> syn::Result<()> {
    let mut errors: Vec<syn::Error> = Vec::new();
    let sig = &function.sig;
    if sig.asyncness.is_none() {
        errors.push(syn::Error::new_spanned(
            sig.fn_token,
            "the `async` keyword is missing from the function declaration; write `async fn ...`",
        ));
    }
    // Another function under `#[weft::main]` may take arguments: the body's
    // `async move` block captures them. Only `main` (and tests) cannot.
    let takes_none = kind == Kind::Test || sig.ident == "main";
    if takes_none && !sig.inputs.is_empty() {
        let message = match kind {
            Kind::Main => {
                "the main function takes no arguments; remove them \
                 (read the command line with `std::env::args()`)"
            }
            Kind::Test => "a test function takes no arguments; remove them",
        };
        errors.push(syn::Error::new_spanned(&sig.inputs, message));
    }
    if kind == Kind::Test {
        if let Some(test) = function.attrs.iter().find(|attr| is_test_attribute(attr)) {
            let path = path_to_string(test.path());
            let message = if path == "weft::test" {
                "`#[weft::test]` is given twice; keep one".to_owned()
            } else {
                format!("`#[weft::test]` already makes this a test; remove this `#[{path}]`")
            };
            errors.push(syn::Error::new_spanned(test, message));
        }
    }
    let mut errors = errors.into_iter();
    let Some(mut first) = errors.next() else {
        return Ok(());
    };
    errors.for_each(|more| first.combine(more));
    Err(first)
}

/// A second test attribute: `#[test]`, `#[core::prelude::v1::test]`,
/// `#[tokio::test]`, or `#[weft::test]` given twice (which would otherwise
/// expand again on the rewritten, no longer `async`, function and report
/// a confusing missing `async`). The last path segment is what counts.
fn is_test_attribute(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|last| last.ident == "test")
}

pub(crate) fn path_to_string(path: &syn::Path) -> String {
    let segments: Vec<String> = path
        .segments
        .iter()
        .map(|segment| segment.ident.to_string())
        .collect();
    segments.join("::")
}

/// The function without `async`, its body run by `block_on` on a runtime
/// built for this call. The body is moved into an `async` block as it is,
/// so `return`, `?` and the return type keep their meaning.
fn rewrite(kind: Kind, config: &Config, mut function: ItemFn) -> TokenStream {
    function.sig.asyncness = None;
    let body = &function.block;
    // `usize` literal: `Builder::worker_threads` takes a `usize`.
    let worker_threads = config
        .worker_threads
        .map(|threads| quote!(.worker_threads(#threads)));
    // Spanned on the user's `start_paused`, so a missing `test-util`
    // feature (the helper macro then expands to `compile_error!`) is
    // reported on the argument that needs it.
    let pause = config
        .start_paused
        .map(|span| quote_spanned!(span=> ::weft::__weft_start_paused!();));
    // `-> !` (a server's `main`): no `let` can name `!` on stable, and the
    // `async` block's output is `()` or `!` by the edition's fallback, so
    // the call is followed by an end the signature accepts.
    let diverges = matches!(&function.sig.output, ReturnType::Type(_, ty) if matches!(**ty, syn::Type::Never(_)));
    let declared_output = (!diverges)
        .then(|| declare_output(&function.sig.output))
        .flatten();
    let never_returns = diverges.then(|| {
        quote! {
            ;
            #[allow(unreachable_code)]
            ::core::unreachable!("the body of a `-> !` function returned")
        }
    });
    let mut builder = match config.flavor {
        Flavor::MultiThread => quote! {
            ::weft::runtime::Builder::new_multi_thread()
                #worker_threads
        },
        Flavor::CurrentThread => quote! {
            ::weft::runtime::Builder::new_current_thread()
        },
    };
    // Spanned on the user's `tokio_compat`, as `start_paused`: without the
    // `tokio-compat` feature the helper macro is a `compile_error!` there.
    if let Some(span) = config.tokio_compat {
        builder = quote_spanned!(span=> ::weft::__weft_tokio_compat!(#builder));
    }
    let new_body = quote! {
        {
            let body = async move {
                #declared_output
                #pause
                #body
            };
            #builder
                .build()
                .expect("failed to build the weft runtime")
                .block_on(body)
            #never_returns
        }
    };
    let test_attribute = (kind == Kind::Test).then(|| quote!(#[::core::prelude::v1::test]));
    let ItemFn {
        attrs, vis, sig, ..
    } = &function;
    quote! {
        #test_attribute
        #(#attrs)*
        #vis #sig #new_body
    }
}

/// A `return` of the declared type that never runs, put first in the
/// `async` block: it fixes the block's output type before the body is
/// checked. Without it the output type is inferred from the body's first
/// `return` or its tail, and a mistake there (`Ok(5)` for a
/// `Result<(), E>`) is reported on the attribute as a mismatch of the
/// whole block; with it, rustc points at the user's expression.
///
/// Left out when the return type contains `impl Trait`, which a `let`
/// cannot name.
fn declare_output(output: &ReturnType) -> Option<TokenStream> {
    let (ty, span) = match output {
        ReturnType::Default => (quote!(()), Span::call_site()),
        ReturnType::Type(_, ty) => (ty.to_token_stream(), ty.span()),
    };
    if mentions_impl(ty.clone()) {
        return None;
    }
    // Spanned on the declared type: rustc's "return type inferred to be
    // ... here" then points at the signature. Lints then count this code
    // as the user's, hence the `allow`s (`clippy::unreachable` fires in
    // crates that enable restriction lints).
    Some(quote_spanned! {span=>
        #[allow(
            unreachable_code,
            unused_variables,
            clippy::diverging_sub_expression,
            clippy::needless_return,
            clippy::unreachable
        )]
        if false {
            let declared: #ty = ::core::unreachable!();
            return declared;
        }
    })
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == "impl",
        TokenTree::Group(group) => mentions_impl(group.stream()),
        _ => false,
    })
}

/// After an error: the error, plus a synchronous stand-in for the function
/// with the same name and return type, so the crate does not also report
/// a missing `main` or an `async fn main` on top of the message that
/// matters.
fn fallback(kind: Kind, mut function: ItemFn, error: syn::Error) -> TokenStream {
    function.sig.asyncness = None;
    function.sig.inputs.clear();
    function.attrs.retain(|attr| !is_test_attribute(attr));
    let test_attribute = (kind == Kind::Test).then(|| quote!(#[::core::prelude::v1::test]));
    let ItemFn {
        attrs, vis, sig, ..
    } = &function;
    with_error(
        error,
        quote! {
            #test_attribute
            #(#attrs)*
            #vis #sig { ::core::unreachable!() }
        },
    )
}

fn with_error(error: syn::Error, item: TokenStream) -> TokenStream {
    let error = error.to_compile_error();
    quote! { #error #item }
}
