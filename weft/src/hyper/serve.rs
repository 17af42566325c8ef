//! [`serve`]: the accept loop, its settings and its graceful shutdown.

use std::fmt;
use std::future::{Future, IntoFuture, Pending, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::{Request, Response};
use tower_service::Service;

use super::accept::{AfterFailure, Backoff};
use super::bounds::{HttpBody, HttpService};
use super::connection;
use super::drain::Drain;
use crate::net::{TcpListener, TcpStream};
use crate::time::Sleep;

/// hyper's default, and axum's.
const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves HTTP/1 and HTTP/2 on `listener` with `service`, each connection
/// in a weft task of its own; await it (it is [`IntoFuture`]) to run the
/// server.
///
/// `service` is any tower `Service` of `Request<Incoming>` that is `Clone`
/// (an axum `Router` as it is, or `tower::service_fn(handler)` for a hyper
/// handler): each connection gets a clone. The protocol is found per connection (the
/// HTTP/2 preface, with prior knowledge, or HTTP/1.1 with keep-alive and
/// upgrades). Each accepted stream gets `TCP_NODELAY`
/// ([`tcp_nodelay`](Serve::tcp_nodelay)); a client has
/// [`header_read_timeout`](Serve::header_read_timeout) (30 s by default)
/// to show its protocol and then each HTTP/1 request head, or its
/// connection is closed.
///
/// Awaited as it is, the server runs until the listener fails;
/// [`with_graceful_shutdown`](Serve::with_graceful_shutdown) adds a signal
/// that stops it cleanly. An `accept` error of one connection
/// (`ECONNABORTED`) is retried at once; running out of file descriptors,
/// buffers or memory (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) pauses the
/// accept loop (1 ms, doubling up to 1 s while it lasts) and goes on;
/// any other error (a listener whose runtime has shut down, one shut down
/// with `shutdown(2)`) is returned at once, and the connections already
/// accepted go on as detached tasks.
///
/// ```no_run
/// use axum::Router;
/// use axum::routing::get;
/// use weft::net::TcpListener;
///
/// #[weft::main]
/// async fn main() -> std::io::Result<()> {
///     let app = Router::new().route("/", get(|| async { "Hello, world!" }));
///     let listener = TcpListener::bind("127.0.0.1:3000").await?;
///     weft::hyper::serve(listener, app)
///         .with_graceful_shutdown(async {
///             let _ = weft::signal::ctrl_c().await;
///         })
///         .await
/// }
/// ```
///
/// # Panics
///
/// When awaited outside a weft runtime (connections are spawned on the
/// current runtime).
pub fn serve<S, B>(listener: TcpListener, service: S) -> Serve<S>
where
    S: HttpService<B>,
    B: HttpBody,
{
    Serve {
        listener,
        service,
        config: Config {
            header_read_timeout: Some(DEFAULT_HEADER_READ_TIMEOUT),
            tcp_nodelay: true,
        },
        signal: std::future::pending(),
    }
}

/// The server [`serve`] returns: settings, then `.await` (it is
/// [`IntoFuture`], with `io::Result<()>` as output).
///
/// `G` is the graceful-shutdown signal: none (a future that never
/// completes) until [`with_graceful_shutdown`](Serve::with_graceful_shutdown).
#[must_use = "a server does nothing until awaited"]
pub struct Serve<S, G = Pending<()>> {
    listener: TcpListener,
    service: S,
    config: Config,
    signal: G,
}

#[derive(Debug, Clone, Copy)]
struct Config {
    header_read_timeout: Option<Duration>,
    tcp_nodelay: bool,
}

impl<S, G> Serve<S, G> {
    /// How long a client may take to show its protocol after connecting,
    /// and then to send each HTTP/1 request head (on a keep-alive
    /// connection, counted from the previous response); past it the
    /// connection is closed. `None` turns it off. Default: 30 s. Durations
    /// past [`FAR_FUTURE`](crate::time::FAR_FUTURE) (about 30 years) are
    /// capped, as weft's timers cap them.
    ///
    /// An HTTP/2 connection that has sent its preface may stay idle: this
    /// timeout does not apply to it.
    pub fn header_read_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Serve<S, G> {
        self.config.header_read_timeout = timeout
            .into()
            .map(|timeout| timeout.min(crate::time::FAR_FUTURE));
        self
    }

    /// Whether accepted streams get `TCP_NODELAY` (responses go out
    /// without waiting for the client's acknowledgements). Default: `true`.
    pub fn tcp_nodelay(mut self, nodelay: bool) -> Serve<S, G> {
        self.config.tcp_nodelay = nodelay;
        self
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl<S> Serve<S> {
    /// Serves until `signal` completes, then stops accepting (the
    /// listener is closed: new connections are refused), asks every
    /// connection to finish (hyper's graceful shutdown: an HTTP/1
    /// connection closes after the response in flight, an idle one at
    /// once; HTTP/2 sends `GOAWAY` and finishes its open streams), waits
    /// until all have, and returns `Ok(())`.
    ///
    /// Requests in flight are not cut short, so a client that never
    /// finishes its request holds the shutdown; bound it with
    /// [`weft::time::timeout`](crate::time::timeout) around the whole
    /// `serve` if needed.
    pub fn with_graceful_shutdown<G>(self, signal: G) -> Serve<S, G>
    where
        G: Future<Output = ()> + Send + 'static,
    {
        Serve {
            listener: self.listener,
            service: self.service,
            config: self.config,
            signal,
        }
    }
}

impl<S, G> fmt::Debug for Serve<S, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Serve")
            .field("listener", &self.listener)
            .field("header_read_timeout", &self.config.header_read_timeout)
            .field("tcp_nodelay", &self.config.tcp_nodelay)
            .finish_non_exhaustive()
    }
}

impl<S, B, G> IntoFuture for Serve<S, G>
where
    // The response's type names `B` (an impl's parameters must be
    // constrained by its types or an associated type).
    S: HttpService<B> + Service<Request<Incoming>, Response = Response<B>>,
    B: HttpBody,
    G: Future<Output = ()> + Send + 'static,
{
    type Output = io::Result<()>;
    type IntoFuture = ServeFuture;

    fn into_future(self) -> ServeFuture {
        ServeFuture(Box::pin(run(self)))
    }
}

/// The future of an awaited [`Serve`].
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ServeFuture(Pin<Box<dyn Future<Output = io::Result<()>> + Send>>);

impl Future for ServeFuture {
    type Output = io::Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.as_mut().poll(cx)
    }
}

impl fmt::Debug for ServeFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeFuture").finish_non_exhaustive()
    }
}

/// What ends one wait of the accept loop.
enum Event {
    Signal,
    Accepted(TcpStream),
    Failed(io::Error),
}

async fn run<S, B, G>(serve: Serve<S, G>) -> io::Result<()>
where
    S: HttpService<B>,
    B: HttpBody,
    G: Future<Output = ()> + Send + 'static,
{
    assert!(
        crate::runtime::context::current().is_some(),
        "`weft::hyper::serve` awaited outside of a weft runtime: it spawns a task per \
         connection on the current runtime, so await it in a task or inside \
         `Runtime::block_on`"
    );
    let Serve {
        listener,
        service,
        config,
        signal,
    } = serve;
    let builder = Arc::new(connection::builder(config.header_read_timeout));
    let drain = Drain::new();
    let mut signal = pin!(signal);
    let mut backoff = Backoff::new();
    let mut pause: Option<Pin<Box<Sleep>>> = None;
    loop {
        match next_event(&listener, signal.as_mut(), &mut pause).await {
            Event::Signal => break,
            Event::Accepted(stream) => {
                backoff.accepted();
                if config.tcp_nodelay {
                    // A connection already reset may refuse it; hyper then
                    // finds out what is wrong with the connection itself.
                    let _ = stream.set_nodelay(true);
                }
                let watch = Drain::watch(&drain);
                let service = service.clone();
                let builder = Arc::clone(&builder);
                connection::spawn(stream, service, builder, config.header_read_timeout, watch);
            }
            Event::Failed(error) => match backoff.failed(&error) {
                AfterFailure::Retry => {}
                AfterFailure::Pause(duration) => {
                    pause = Some(Box::pin(crate::time::sleep(duration)))
                }
                AfterFailure::Return => return Err(error),
            },
        }
    }
    // Stop accepting first: from here on a connection attempt is refused
    // instead of waiting in a queue nobody serves.
    drop(listener);
    drain.start();
    poll_fn(|cx| drain.poll_idle(cx)).await;
    Ok(())
}

/// Waits for the signal, a connection or an accept error (the signal
/// first: once it has come, nothing more is accepted), after `pause` if
/// one is set.
async fn next_event<G: Future<Output = ()>>(
    listener: &TcpListener,
    mut signal: Pin<&mut G>,
    pause: &mut Option<Pin<Box<Sleep>>>,
) -> Event {
    poll_fn(|cx| {
        if signal.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Event::Signal);
        }
        if let Some(sleep) = pause {
            ready!(sleep.as_mut().poll(cx));
            *pause = None;
        }
        Poll::Ready(match ready!(listener.poll_accept(cx)) {
            Ok((stream, _peer)) => Event::Accepted(stream),
            Err(error) => Event::Failed(error),
        })
    })
    .await
}
