//! A crate written for tokio (reqwest, which uses tokio's reactor, timers
//! and `tokio::spawn`) used inside weft tasks as it is: the runtime is
//! built with `tokio_compat`, which runs a tokio runtime on a thread of its
//! own and enters it on every weft thread. No wrapper around the futures
//! (compare `reqwest_compat.rs`, which wraps each in `async_compat::Compat`).
//!
//! `cargo run -p weft --example reqwest_tokio_compat --features hyper,tokio-compat -- http://127.0.0.1:PORT/`
//! (e.g. against `cargo run -p weft --example http_server --features hyper`).

/// GETs `url` with reqwest from inside a weft task.
pub async fn fetch(url: &str) -> reqwest::Result<(reqwest::StatusCode, String)> {
    let response = reqwest::get(url).await?;
    let status = response.status();
    Ok((status, response.text().await?))
}

#[allow(dead_code)] // the tests include this file for `fetch`
#[weft::main(tokio_compat = true)]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: reqwest_tokio_compat http://host[:port]/path")?;
    // From a spawned task, as a service would: any weft thread works.
    let (status, body) = weft::spawn(async move { fetch(&url).await }).await??;
    println!("{status}\n{body}");
    Ok(())
}
