//! An axum `Router` served on weft through hyper-util's connection builder
//! (HTTP/1 and HTTP/2) and `TowerToHyperService`: a JSON route and a path
//! parameter.
//!
//! `cargo run -p weft --example axum --features hyper -- [PORT]`, then
//! `curl http://127.0.0.1:PORT/hello/ada` or `curl http://127.0.0.1:PORT/status`.
//! Prints the address it listens on.

use axum::Json;
use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use serde::Serialize;
use weft::hyper::{Executor, Io, Timer};
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

/// Serves `app` on `listener` forever.
pub async fn serve(listener: TcpListener, app: Router) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(app.clone());
        drop(weft::spawn(async move {
            let mut builder = auto::Builder::new(Executor);
            builder.http1().timer(Timer::new());
            builder.http2().timer(Timer::new());
            let _ = builder.serve_connection(Io::new(stream), service).await;
        }));
    }
}

#[allow(dead_code)] // the tests include this file for `app` and `serve`
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
    serve(listener, app()).await
}
