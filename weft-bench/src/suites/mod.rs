//! The suites.

pub mod echo;
pub mod file;
pub mod http;
pub mod metrics;
pub mod mixed;
pub mod scheduler;
pub mod service;
pub mod stall;
pub mod timers;
