//! An axum `Router` served on weft by `weft::hyper::serve` (HTTP/1 and
//! HTTP/2): a JSON route and a path parameter.
//!
//! `cargo run -p weft --example axum --features hyper -- [PORT]`, then
//! `curl http://127.0.0.1:PORT/hello/ada` or `curl http://127.0.0.1:PORT/status`.
//! Prints the address it listens on.

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use serde::Serialize;
use weft::net::TcpListener;

#[derive(Serialize)]
pub struct Status {
    pub runtime: &'static str,
    pub workers: usize,
}

/// The app: `GET /hello/{name}` and `GET /status` (JSON).
pub fn app() -> Router {
    Router::new()
        .route(
            "/hello/{name}",
            get(|Path(name): Path<String>| async move { format!("Hello, {name}!") }),
        )
        .route(
            "/status",
            get(|| async {
                let workers = weft::runtime::Handle::current().metrics().num_workers;
                Json(Status {
                    runtime: "weft",
                    workers,
                })
            }),
        )
}

#[allow(dead_code)] // the tests include this file for `app`
#[weft::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .map_or(Ok(0), |p| p.parse())
        .map_err(|error| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("PORT: {error}"))
        })?;
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("http://{}", listener.local_addr()?);
    weft::hyper::serve(listener, app()).await
}
