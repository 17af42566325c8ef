//! What every suite shares.

pub mod chart;
pub mod cli;
pub mod compare;
pub mod figure;
pub mod json;
pub mod latency;
pub mod measure;
pub mod others;
pub mod run;
pub mod runtimes;
pub mod schedule;
pub mod setup;
pub mod stats;
pub mod suite;
pub mod summary;
pub mod system;
pub mod table;
pub mod thread;
