//! A crate written for tokio (reqwest, which calls tokio's reactor
//! directly) used inside a weft runtime through `async_compat::Compat`:
//! the bridge runs tokio's reactor on one background thread and enters it
//! around each poll of the wrapped future. With weft's `tokio-compat`
//! feature no wrapper is needed: see `reqwest_tokio_compat.rs`.
//!
//! `cargo run -p weft --example reqwest_compat --features hyper -- http://127.0.0.1:PORT/`
//! (e.g. against `cargo run -p weft --example http_server --features hyper`).

use async_compat::Compat;

/// GETs `url` with reqwest from inside a weft task.
pub async fn fetch(url: &str) -> reqwest::Result<(reqwest::StatusCode, String)> {
    Compat::new(async {
        let response = reqwest::get(url).await?;
        let status = response.status();
        Ok((status, response.text().await?))
    })
    .await
}

#[allow(dead_code)] // the tests include this file for `fetch`
#[weft::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: reqwest_compat http://host[:port]/path")?;
    let (status, body) = fetch(&url).await?;
    println!("{status}\n{body}");
    Ok(())
}
