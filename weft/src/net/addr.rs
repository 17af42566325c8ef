//! Socket addresses for `bind` and `connect`: what `std`'s `ToSocketAddrs`
//! takes, resolved without blocking a worker. An address that is already
//! an IP and port (a `SocketAddr`, `"127.0.0.1:8080"`, `("::1", 80)`) is
//! parsed in place; a host name is resolved on the blocking pool
//! (`getaddrinfo` can take seconds), from an owned copy of the name.
//!
//! This is tokio's design (a sealed trait of its own with the same
//! implementors as `std::net::ToSocketAddrs`): the resolution has to move
//! the name to another thread, which `std`'s trait, implemented for
//! borrowed strings, does not allow.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Something `bind` and `connect` accept as address: the implementors of
/// `std::net::ToSocketAddrs` (`SocketAddr`, `(IpAddr, u16)`, `"host:port"`,
/// `("host", port)`, `&[SocketAddr]`, ...). Sealed.
pub trait ToSocketAddrs: sealed::Resolve {}

/// The addresses, resolved.
pub(crate) async fn resolve(addr: impl ToSocketAddrs) -> io::Result<Vec<SocketAddr>> {
    match addr.resolve() {
        sealed::Resolved::Now(addrs) => addrs,
        sealed::Resolved::Lookup(name) => {
            let looked_up = crate::task::spawn_blocking(move || {
                std::net::ToSocketAddrs::to_socket_addrs(&name)
            })
            .await
            .map_err(|error| io::Error::other(format!("address lookup failed: {error}")))??;
            Ok(looked_up.collect())
        }
    }
}

/// Resolves `host` to its socket addresses, as `bind` and `connect` do: an
/// IP address and port at once, a host name on the blocking pool
/// (`getaddrinfo` can take seconds). tokio's `net::lookup_host`.
///
/// ```
/// weft::runtime::Runtime::new().unwrap().block_on(async {
///     let mut addrs = weft::net::lookup_host("127.0.0.1:80").await.unwrap();
///     assert_eq!(addrs.next(), Some("127.0.0.1:80".parse().unwrap()));
/// });
/// ```
///
/// # Panics
///
/// When a name must be looked up outside a runtime context.
pub async fn lookup_host(host: impl ToSocketAddrs) -> io::Result<impl Iterator<Item = SocketAddr>> {
    resolve(host).await.map(Vec::into_iter)
}

/// The first address that `op` succeeds with, or the last error.
pub(crate) async fn try_each<T, F, Fut>(addr: impl ToSocketAddrs, mut op: F) -> io::Result<T>
where
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>>,
{
    let mut last_error = None;
    for addr in resolve(addr).await? {
        match op(addr).await {
            Ok(value) => return Ok(value),
            Err(error) => last_error = Some(error),
        }
    }
    Err(last_error.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}

pub(crate) mod sealed {
    use super::*;

    pub enum Resolved {
        Now(io::Result<Vec<SocketAddr>>),
        /// A `host:port` string to look up on the blocking pool.
        Lookup(String),
    }

    pub trait Resolve {
        fn resolve(&self) -> Resolved;
    }

    fn now(addrs: impl IntoIterator<Item = SocketAddr>) -> Resolved {
        Resolved::Now(Ok(addrs.into_iter().collect()))
    }

    impl Resolve for SocketAddr {
        fn resolve(&self) -> Resolved {
            now([*self])
        }
    }
    impl Resolve for SocketAddrV4 {
        fn resolve(&self) -> Resolved {
            now([SocketAddr::V4(*self)])
        }
    }
    impl Resolve for SocketAddrV6 {
        fn resolve(&self) -> Resolved {
            now([SocketAddr::V6(*self)])
        }
    }
    impl Resolve for (IpAddr, u16) {
        fn resolve(&self) -> Resolved {
            now([SocketAddr::new(self.0, self.1)])
        }
    }
    impl Resolve for (Ipv4Addr, u16) {
        fn resolve(&self) -> Resolved {
            now([SocketAddr::new(self.0.into(), self.1)])
        }
    }
    impl Resolve for (Ipv6Addr, u16) {
        fn resolve(&self) -> Resolved {
            now([SocketAddr::new(self.0.into(), self.1)])
        }
    }
    impl Resolve for [SocketAddr] {
        fn resolve(&self) -> Resolved {
            now(self.iter().copied())
        }
    }
    impl<const N: usize> Resolve for [SocketAddr; N] {
        fn resolve(&self) -> Resolved {
            now(self.iter().copied())
        }
    }
    impl Resolve for Vec<SocketAddr> {
        fn resolve(&self) -> Resolved {
            now(self.iter().copied())
        }
    }
    impl Resolve for str {
        fn resolve(&self) -> Resolved {
            match self.parse::<SocketAddr>() {
                Ok(addr) => now([addr]),
                Err(_) => Resolved::Lookup(self.to_owned()),
            }
        }
    }
    impl Resolve for String {
        fn resolve(&self) -> Resolved {
            self.as_str().resolve()
        }
    }
    impl Resolve for (&str, u16) {
        fn resolve(&self) -> Resolved {
            match self.0.parse::<IpAddr>() {
                Ok(ip) => now([SocketAddr::new(ip, self.1)]),
                Err(_) => Resolved::Lookup(format!("{}:{}", self.0, self.1)),
            }
        }
    }
    impl Resolve for (String, u16) {
        fn resolve(&self) -> Resolved {
            (self.0.as_str(), self.1).resolve()
        }
    }
    impl<T: Resolve + ?Sized> Resolve for &T {
        fn resolve(&self) -> Resolved {
            (**self).resolve()
        }
    }
}

impl ToSocketAddrs for SocketAddr {}
impl ToSocketAddrs for SocketAddrV4 {}
impl ToSocketAddrs for SocketAddrV6 {}
impl ToSocketAddrs for (IpAddr, u16) {}
impl ToSocketAddrs for (Ipv4Addr, u16) {}
impl ToSocketAddrs for (Ipv6Addr, u16) {}
impl ToSocketAddrs for [SocketAddr] {}
impl<const N: usize> ToSocketAddrs for [SocketAddr; N] {}
impl ToSocketAddrs for Vec<SocketAddr> {}
impl ToSocketAddrs for str {}
impl ToSocketAddrs for String {}
impl ToSocketAddrs for (&str, u16) {}
impl ToSocketAddrs for (String, u16) {}
impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
