//! Reading the attribute's arguments: `flavor = "current_thread" |
//! "multi_thread"`, `worker_threads = N`, `start_paused = bool`,
//! `tokio_compat = bool`.
//!
//! Every rejection is a `syn::Error` spanned on the token the user has to
//! change, and its message says what to write instead.

use proc_macro2::Span;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, MetaNameValue, Token};

use crate::expand::path_to_string;

/// Which attribute is being expanded: they accept different arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Main,
    Test,
}

impl Kind {
    /// The attribute as the user writes it, for messages.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Main => "#[weft::main]",
            Kind::Test => "#[weft::test]",
        }
    }

    fn accepted(self) -> &'static str {
        match self {
            Kind::Main => "`flavor`, `worker_threads`, `tokio_compat`",
            Kind::Test => "`flavor`, `worker_threads`, `start_paused`, `tokio_compat`",
        }
    }
}

/// The runtime the attribute builds (tokio's `flavor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `Builder::new_multi_thread`: weft's default for both attributes.
    #[default]
    MultiThread,
    /// `Builder::new_current_thread`.
    CurrentThread,
}

/// What the arguments ask for.
#[derive(Default)]
pub(crate) struct Config {
    /// `flavor = "..."`: the multi-thread runtime unless written.
    pub(crate) flavor: Flavor,
    /// `worker_threads = N`: `None` keeps the builder's default (the
    /// machine's available parallelism).
    pub(crate) worker_threads: Option<usize>,
    /// `start_paused = true`: where it was written, so a missing
    /// `test-util` feature is reported there.
    pub(crate) start_paused: Option<Span>,
    /// `tokio_compat = true`: where it was written, so a missing
    /// `tokio-compat` feature is reported there.
    pub(crate) tokio_compat: Option<Span>,
}

/// Parses the tokens between the attribute's parentheses.
pub(crate) fn parse(kind: Kind, args: proc_macro2::TokenStream) -> syn::Result<Config> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args)?;
    let mut config = Config::default();
    // Every setting is an `Option`: a second occurrence is found by the
    // slot being filled. A flag set to `false` fills no slot, so the flags
    // are tracked separately.
    let mut seen_start_paused = false;
    let mut seen_tokio_compat = false;
    let mut seen_flavor = false;
    // Where `worker_threads` was written, to refuse it with a current-thread
    // flavor (either order).
    let mut worker_threads_at = None;
    for meta in metas {
        let name_value = require_value(kind, &meta)?;
        let name = name_value.path.get_ident().map(|ident| ident.to_string());
        match name.as_deref() {
            Some("worker_threads") => {
                if config.worker_threads.is_some() {
                    return Err(given_twice(&name_value.path, "worker_threads"));
                }
                config.worker_threads = Some(parse_worker_threads(&name_value.value)?);
                worker_threads_at = Some(name_value.path.clone());
            }
            Some("flavor") => {
                if seen_flavor {
                    return Err(given_twice(&name_value.path, "flavor"));
                }
                seen_flavor = true;
                config.flavor = parse_flavor(&name_value.value)?;
            }
            Some("start_paused") if kind == Kind::Test => {
                if seen_start_paused {
                    return Err(given_twice(&name_value.path, "start_paused"));
                }
                seen_start_paused = true;
                if parse_bool("start_paused", &name_value.value)? {
                    config.start_paused = Some(name_value.path.span());
                }
            }
            Some("tokio_compat") => {
                if seen_tokio_compat {
                    return Err(given_twice(&name_value.path, "tokio_compat"));
                }
                seen_tokio_compat = true;
                if parse_bool("tokio_compat", &name_value.value)? {
                    config.tokio_compat = Some(name_value.path.span());
                }
            }
            Some("start_paused") => {
                return Err(syn::Error::new_spanned(
                    &name_value.path,
                    "`start_paused` is only for tests: \
                     use `#[weft::test(start_paused = true)]` on a test function, \
                     or call `weft::time::pause()` in `main` (feature `test-util`)",
                ));
            }
            _ => return Err(unknown_argument(kind, &name_value.path)),
        }
    }
    if let (Flavor::CurrentThread, Some(path)) = (config.flavor, worker_threads_at) {
        return Err(syn::Error::new_spanned(
            path,
            format!(
                "`worker_threads` needs the multi-thread runtime: remove it, or write \
                 `#[{}(flavor = \"multi_thread\", worker_threads = ...)]`",
                kind.attribute()
                    .trim_start_matches("#[")
                    .trim_end_matches(']')
            ),
        ));
    }
    Ok(config)
}

fn parse_flavor(value: &Expr) -> syn::Result<Flavor> {
    let Expr::Lit(ExprLit {
        lit: Lit::Str(text),
        ..
    }) = value
    else {
        return Err(syn::Error::new_spanned(
            value,
            "`flavor` takes a string: write `flavor = \"current_thread\"` or \
             `flavor = \"multi_thread\"`",
        ));
    };
    match text.value().as_str() {
        "current_thread" => Ok(Flavor::CurrentThread),
        "multi_thread" => Ok(Flavor::MultiThread),
        other => Err(syn::Error::new_spanned(
            text,
            format!(
                "no such runtime flavor `{other}`: the flavors are `current_thread` and \
                 `multi_thread`"
            ),
        )),
    }
}

/// Every argument is `name = value`; a bare name or a list is refused with
/// the form to use.
fn require_value(kind: Kind, meta: &Meta) -> syn::Result<&MetaNameValue> {
    match meta {
        Meta::NameValue(name_value) => Ok(name_value),
        Meta::Path(path) if path.is_ident("worker_threads") => Err(syn::Error::new_spanned(
            path,
            "`worker_threads` needs a value: write `worker_threads = 4`",
        )),
        Meta::Path(path) if path.is_ident("start_paused") && kind == Kind::Test => {
            Err(syn::Error::new_spanned(
                path,
                "`start_paused` needs a value: write `start_paused = true`",
            ))
        }
        Meta::Path(path) if path.is_ident("flavor") => Err(syn::Error::new_spanned(
            path,
            "`flavor` needs a value: write `flavor = \"current_thread\"`",
        )),
        Meta::Path(path) if path.is_ident("tokio_compat") => Err(syn::Error::new_spanned(
            path,
            "`tokio_compat` needs a value: write `tokio_compat = true`",
        )),
        Meta::Path(path) => Err(unknown_argument(kind, path)),
        Meta::List(list) => Err(unknown_argument(kind, &list.path)),
    }
}

fn unknown_argument(kind: Kind, path: &syn::Path) -> syn::Error {
    let name = path_to_string(path);
    syn::Error::new_spanned(
        path,
        format!(
            "unknown argument `{name}` for `{}`; the accepted arguments are {}",
            kind.attribute(),
            kind.accepted()
        ),
    )
}

fn given_twice(path: &syn::Path, name: &str) -> syn::Error {
    syn::Error::new_spanned(path, format!("`{name}` is given twice; keep one"))
}

fn parse_worker_threads(value: &Expr) -> syn::Result<usize> {
    let not_an_integer = || {
        syn::Error::new_spanned(
            value,
            "`worker_threads` takes an integer literal: write `worker_threads = 4`",
        )
    };
    let Expr::Lit(ExprLit {
        lit: Lit::Int(int), ..
    }) = value
    else {
        return Err(not_an_integer());
    };
    // `base10_parse` also refuses suffixes other than integer ones and
    // values that do not fit a `usize`.
    let threads: usize = int.base10_parse().map_err(|_| not_an_integer())?;
    if threads == 0 {
        return Err(syn::Error::new_spanned(
            int,
            "`worker_threads` must be at least 1: a runtime with no worker thread \
             would never run a task (write `worker_threads = 1` or more)",
        ));
    }
    Ok(threads)
}

fn parse_bool(name: &str, value: &Expr) -> syn::Result<bool> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{name}` takes `true` or `false`: write `{name} = true`"),
        )),
    }
}
