//! What every suite shares.

pub mod cli;
pub mod compare;
pub mod figure;
pub mod json;
pub mod measure;
pub mod runtimes;
pub mod summary;
pub mod system;
pub mod table;
