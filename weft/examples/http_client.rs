//! A hyper HTTP/1 client on weft: fetches a URL and prints the status, the
//! headers and the body.
//!
//! `cargo run -p weft --example http_client --features hyper -- http://127.0.0.1:PORT/`
//! (plain `http://` only: no TLS here).

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use weft::hyper::Io;
use weft::net::TcpStream;

/// GETs `url` (`http://host[:port]/path`) and returns the status and body.
pub async fn get(
    url: &str,
) -> Result<(hyper::StatusCode, Bytes), Box<dyn std::error::Error + Send + Sync>> {
    let uri: hyper::Uri = url.parse()?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("only http:// URLs are supported, got {url}").into());
    }
    let host = uri.host().ok_or("the URL has no host")?.to_owned();
    let port = uri.port_u16().unwrap_or(80);
    let stream = TcpStream::connect((host.as_str(), port)).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(Io::new(stream)).await?;
    let driver = weft::spawn(async move {
        let _ = connection.await;
    });
    let authority = uri.authority().ok_or("the URL has no authority")?.clone();
    let request = Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(hyper::header::HOST, authority.as_str())
        .body(Empty::<Bytes>::new())?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    drop(sender);
    let _ = driver.await;
    Ok((status, body))
}

#[allow(dead_code)] // the tests include this file for `get`
#[weft::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: http_client http://host[:port]/path")?;
    let (status, body) = get(&url).await?;
    println!("{status}");
    println!("{}", String::from_utf8_lossy(&body));
    Ok(())
}
