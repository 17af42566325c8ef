//! The generator's HTTP client: connections, `GET`s checked for their
//! status and body, and the soak's request timeout.

use super::*;

/// `request` within the soak's request timeout, if any: else a timeout
/// error (and `request` dropped, with its connection).
pub(super) async fn within(
    shared: &Shared,
    request: impl Future<Output = Result<(), Failure>>,
) -> Result<(), Failure> {
    let Some(limit) = shared.request_timeout else {
        return request.await;
    };
    match tokio::time::timeout(limit, request).await {
        Ok(result) => result,
        Err(_) => Err(Failure {
            kind: Failed::Timeout,
            unsent: false,
            text: format!("no answer within {limit:?}"),
        }),
    }
}

/// `GET path`'s body on a connection of its own (not counted among the
/// generator's), if the answer is `200` within a second.
pub(super) async fn fetch(address: SocketAddr, path: &str) -> Option<String> {
    let get = async {
        let mut conn = connect(address, &Arc::default()).await.ok()?;
        get_body(&mut conn.sender, address, path, "").await.ok()
    };
    tokio::time::timeout(Duration::from_secs(1), get)
        .await
        .ok()
        .flatten()
}

pub(super) async fn connect(address: SocketAddr, open: &Arc<AtomicUsize>) -> io::Result<Conn> {
    let stream = tokio::net::TcpStream::connect(address).await?;
    stream.set_nodelay(true)?;
    let (sender, connection) = http1::handshake::<_, Empty<Bytes>>(TokioIo::new(stream))
        .await
        .map_err(io::Error::other)?;
    // Ends when the sender is dropped or the server closes.
    drop(tokio::spawn(connection));
    open.fetch_add(1, Ordering::Relaxed);
    Ok(Conn {
        sender,
        open: Arc::clone(open),
    })
}

/// `GET path`: `Ok` iff the answer is `200` and its body contains `marker`.
pub(super) async fn get(
    sender: &mut SendRequest<Empty<Bytes>>,
    address: SocketAddr,
    path: &str,
    marker: &str,
) -> Result<(), Failure> {
    get_body(sender, address, path, marker).await.map(drop)
}

/// [`get`], and the body it got.
pub(super) async fn get_body(
    sender: &mut SendRequest<Empty<Bytes>>,
    address: SocketAddr,
    path: &str,
    marker: &str,
) -> Result<String, Failure> {
    sender.ready().await.map_err(|e| Failure {
        unsent: true,
        ..Failure::io(e)
    })?;
    let request = Request::get(path)
        .header(header::HOST, address.to_string())
        .body(Empty::new())
        .map_err(Failure::io)?;
    let response = sender.send_request(request).await.map_err(|e| Failure {
        // Canceled: the connection closed before the request was sent.
        unsent: e.is_canceled(),
        ..Failure::io(format!("GET {path}: {e}"))
    })?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| Failure::io(format!("GET {path}: {e}")))?
        .to_bytes();
    let text = String::from_utf8_lossy(&body).into_owned();
    if status != StatusCode::OK || !text.contains(marker) {
        return Err(Failure {
            kind: Failed::Status,
            unsent: false,
            text: format!(
                "GET {path}: {status} {}",
                text.chars().take(200).collect::<String>()
            ),
        });
    }
    Ok(text)
}
