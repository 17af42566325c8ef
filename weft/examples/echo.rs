//! A TCP echo server: every connection gets back what it sends.
//!
//! `cargo run -p weft --example echo [PORT]` (default: a free port), then
//! e.g. `nc 127.0.0.1 PORT`. Prints the address it listens on.

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::net::{TcpListener, TcpStream};

async fn echo(mut stream: TcpStream) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = vec![0; 8192];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&buf[..n]).await?;
    }
}

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
    loop {
        let (stream, peer) = listener.accept().await?;
        drop(weft::spawn(async move {
            if let Err(error) = echo(stream).await {
                eprintln!("{peer}: {error}");
            }
        }));
    }
}
