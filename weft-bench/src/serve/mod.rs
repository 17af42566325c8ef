//! What the echo and HTTP suites share.

pub mod floor;
