//! The bounds `serve` puts on a service and its response bodies, written
//! once as two traits every fitting type implements.

use std::error::Error as StdError;

use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use tower_service::Service;

/// An error a service or body may return: anything that crosses threads.
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// The services [`serve`](super::serve) accepts: an axum `Router`, or any
/// tower service of `Request<Incoming>` answering `Response<B>` whose
/// futures cross threads (each connection is a task). Implemented for every
/// such type; nothing to implement by hand.
pub trait HttpService<B>:
    Service<
        Request<Incoming>,
        Response = Response<B>,
        Future: Send + 'static,
        Error: Into<BoxError>,
    > + Clone
    + Send
    + 'static
{
}

impl<S, B> HttpService<B> for S where
    S: Service<
            Request<Incoming>,
            Response = Response<B>,
            Future: Send + 'static,
            Error: Into<BoxError>,
        > + Clone
        + Send
        + 'static
{
}

/// The response bodies [`serve`](super::serve) accepts: any hyper body
/// whose chunks and errors cross threads. Implemented for every such type.
pub trait HttpBody: Body<Data: Send, Error: Into<BoxError>> + Send + 'static {}

impl<B> HttpBody for B where B: Body<Data: Send, Error: Into<BoxError>> + Send + 'static {}
