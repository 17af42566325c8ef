//! [`Interest`] (what a task waits for) and [`Ready`] (what the reactor
//! saw), tokio's `tokio::io::{Interest, Ready}`.
//!
//! # Invariants
//!
//! - An `Interest` is never empty: its constants each hold one kind and
//!   `remove` returns `None` rather than an empty one.
//! - `Ready`'s bits are the reactor's own (`runtime::ready_bits`), so a
//!   guard's readiness is the word the reactor wrote, masked by what was
//!   waited for; no conversion table can drift.
//! - What an `Interest` waits for ([`Interest::wants`]): `READABLE` is
//!   readable or read-closed, `WRITABLE` writable or write-closed,
//!   `PRIORITY` urgent data or read-closed, `ERROR` an error alone. Unlike
//!   tokio, an error also wakes a `READABLE` or `WRITABLE` waiter (the
//!   retried syscall returns it: a connected UDP socket's refused datagram
//!   comes as an error alone), and then the `Ready` it sees holds `ERROR`.

use std::fmt;
use std::ops;

use crate::runtime::ready_bits as bits;

const I_READABLE: u8 = 1;
const I_WRITABLE: u8 = 1 << 1;
const I_ERROR: u8 = 1 << 2;
const I_PRIORITY: u8 = 1 << 3;

/// The readiness a task waits for: any mix of [`READABLE`], [`WRITABLE`],
/// [`ERROR`] and (Linux) [`PRIORITY`], joined with `|`.
///
/// [`READABLE`]: Interest::READABLE
/// [`WRITABLE`]: Interest::WRITABLE
/// [`ERROR`]: Interest::ERROR
/// [`PRIORITY`]: Interest::PRIORITY
#[derive(Clone, Copy, Eq, PartialEq)]
pub struct Interest(u8);

impl Interest {
    /// Data to read, or the read side closed.
    pub const READABLE: Interest = Interest(I_READABLE);
    /// Room to write, or the write side closed.
    pub const WRITABLE: Interest = Interest(I_WRITABLE);
    /// An error pending on the file (`EPOLLERR`: a socket's error queue, a
    /// refused datagram). Every registration reports errors; waiting for
    /// this alone waits for nothing else.
    pub const ERROR: Interest = Interest(I_ERROR);
    /// Urgent data (`EPOLLPRI`: TCP out-of-band data, a `sysfs` or `/proc`
    /// file that changed). An `AsyncFd` must be registered with it to see
    /// it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const PRIORITY: Interest = Interest(I_PRIORITY);

    /// Whether it holds [`READABLE`](Interest::READABLE).
    pub const fn is_readable(self) -> bool {
        self.0 & I_READABLE != 0
    }

    /// Whether it holds [`WRITABLE`](Interest::WRITABLE).
    pub const fn is_writable(self) -> bool {
        self.0 & I_WRITABLE != 0
    }

    /// Whether it holds [`ERROR`](Interest::ERROR).
    pub const fn is_error(self) -> bool {
        self.0 & I_ERROR != 0
    }

    /// Whether it holds [`PRIORITY`](Interest::PRIORITY).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const fn is_priority(self) -> bool {
        self.0 & I_PRIORITY != 0
    }

    /// Both: `self | other`, usable in a `const`.
    #[must_use = "it returns a new Interest and leaves `self` as it is"]
    pub const fn add(self, other: Interest) -> Interest {
        Interest(self.0 | other.0)
    }

    /// `self` without `other`'s kinds; `None` if nothing is left.
    #[must_use = "it returns a new Interest and leaves `self` as it is"]
    pub fn remove(self, other: Interest) -> Option<Interest> {
        let left = self.0 & !other.0;
        (left != 0).then_some(Interest(left))
    }

    /// The reactor bits whose arrival satisfies this interest.
    pub(crate) fn wants(self) -> crate::runtime::Wants {
        let mut wants = 0;
        if self.is_readable() {
            wants |= bits::READABLE | bits::READ_CLOSED | bits::ERROR;
        }
        if self.is_writable() {
            wants |= bits::WRITABLE | bits::WRITE_CLOSED | bits::ERROR;
        }
        if self.is_error() {
            wants |= bits::ERROR;
        }
        if self.0 & I_PRIORITY != 0 {
            wants |= bits::PRIORITY | bits::READ_CLOSED;
        }
        crate::runtime::Wants(wants)
    }

    /// The registration with `mio` that reports this interest (errors are
    /// always reported: an `ERROR`-only interest registers for reading).
    pub(crate) fn to_mio(self) -> mio::Interest {
        let mut interest: Option<mio::Interest> = None;
        let mut add = |more: mio::Interest| {
            interest = Some(interest.map_or(more, |interest| interest | more));
        };
        if self.is_readable() || self.is_error() {
            add(mio::Interest::READABLE);
        }
        if self.is_writable() {
            add(mio::Interest::WRITABLE);
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if self.is_priority() {
            add(mio::Interest::PRIORITY);
        }
        interest.unwrap_or(mio::Interest::READABLE)
    }
}

impl ops::BitOr for Interest {
    type Output = Interest;

    fn bitor(self, other: Interest) -> Interest {
        self.add(other)
    }
}

impl ops::BitOrAssign for Interest {
    fn bitor_assign(&mut self, other: Interest) {
        *self = self.add(other);
    }
}

impl fmt::Debug for Interest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (I_READABLE, "READABLE"),
            (I_WRITABLE, "WRITABLE"),
            (I_ERROR, "ERROR"),
            (I_PRIORITY, "PRIORITY"),
        ];
        let mut first = true;
        for (bit, name) in names {
            if self.0 & bit != 0 {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// The readiness the reactor saw for a source: a set of readable,
/// writable, read-closed, write-closed, error and (Linux) priority.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ready(u64);

impl Ready {
    /// Nothing.
    pub const EMPTY: Ready = Ready(0);
    /// Data to read.
    pub const READABLE: Ready = Ready(bits::READABLE);
    /// Room to write.
    pub const WRITABLE: Ready = Ready(bits::WRITABLE);
    /// The read side closed (the peer shut its write side down, or hung
    /// up). Final: no wait clears it.
    pub const READ_CLOSED: Ready = Ready(bits::READ_CLOSED);
    /// The write side closed. Final: no wait clears it.
    pub const WRITE_CLOSED: Ready = Ready(bits::WRITE_CLOSED);
    /// Urgent data.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const PRIORITY: Ready = Ready(bits::PRIORITY);
    /// An error pending.
    pub const ERROR: Ready = Ready(bits::ERROR);
    /// Every kind.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub const ALL: Ready = Ready(
        bits::READABLE
            | bits::WRITABLE
            | bits::READ_CLOSED
            | bits::WRITE_CLOSED
            | bits::ERROR
            | bits::PRIORITY,
    );
    /// Every kind.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub const ALL: Ready = Ready(
        bits::READABLE | bits::WRITABLE | bits::READ_CLOSED | bits::WRITE_CLOSED | bits::ERROR,
    );

    /// The reactor's bits, as a `Ready`.
    pub(crate) fn from_bits(ready: u64) -> Ready {
        Ready(ready & Ready::ALL.0)
    }

    /// The reactor's bits of this set.
    pub(crate) fn bits(self) -> u64 {
        self.0
    }

    /// Whether it is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether it holds [`READABLE`](Ready::READABLE).
    pub fn is_readable(self) -> bool {
        self.0 & bits::READABLE != 0
    }

    /// Whether it holds [`WRITABLE`](Ready::WRITABLE).
    pub fn is_writable(self) -> bool {
        self.0 & bits::WRITABLE != 0
    }

    /// Whether it holds [`READ_CLOSED`](Ready::READ_CLOSED).
    pub fn is_read_closed(self) -> bool {
        self.0 & bits::READ_CLOSED != 0
    }

    /// Whether it holds [`WRITE_CLOSED`](Ready::WRITE_CLOSED).
    pub fn is_write_closed(self) -> bool {
        self.0 & bits::WRITE_CLOSED != 0
    }

    /// Whether it holds [`PRIORITY`](Ready::PRIORITY).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub fn is_priority(self) -> bool {
        self.0 & bits::PRIORITY != 0
    }

    /// Whether it holds [`ERROR`](Ready::ERROR).
    pub fn is_error(self) -> bool {
        self.0 & bits::ERROR != 0
    }
}

impl ops::BitOr for Ready {
    type Output = Ready;

    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

impl ops::BitAnd for Ready {
    type Output = Ready;

    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

impl ops::Sub for Ready {
    type Output = Ready;

    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("Ready");
        out.field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed());
        #[cfg(any(target_os = "linux", target_os = "android"))]
        out.field("is_priority", &self.is_priority());
        out.field("is_error", &self.is_error()).finish()
    }
}
