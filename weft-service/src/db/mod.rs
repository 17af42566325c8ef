//! The two databases behind one interface.
//!
//! - SQLite (`sqlite.rs`), the default: a file under `--data-dir`, every
//!   query on the runtime's blocking pool with a connection from a small
//!   pool of open ones.
//! - PostgreSQL (`postgres.rs`): tokio-postgres over the runtime's own TCP
//!   stream, a fixed set of connections reconnected on failure.
//!
//! Both create and seed their tables on first use (`seed.rs`): `users`
//! (10,000 rows) and `fortune` (TechEmpower's 12). Errors come back as
//! [`DbError`]: `Unavailable` (the database is down, unreachable, busy or
//! timed out: the request gets 503 and a later one may succeed) or
//! `Failed` (anything else: 500).

pub mod postgres;
pub mod seed;
pub mod sqlite;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;

use crate::args::Database;
use crate::rt::Rt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub email: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fortune {
    pub id: i32,
    pub message: String,
}

#[derive(Debug)]
pub enum DbError {
    /// Down, unreachable, busy or too slow: worth retrying later.
    Unavailable(String),
    /// Anything else.
    Failed(String),
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbError::Unavailable(why) | DbError::Failed(why) => f.write_str(why),
        }
    }
}

pub enum Db {
    Sqlite(Arc<sqlite::Pool>),
    Postgres(Arc<postgres::Pool>),
}

impl Db {
    /// Opens `database` on `rt`. SQLite must open (the directory, the file,
    /// the seed); PostgreSQL may be down: the service starts anyway,
    /// answers 503 and seeds when it first connects.
    pub async fn open(database: &Database, rt: Rt, connections: usize) -> Result<Db, String> {
        match database {
            Database::Sqlite(dir) => {
                Ok(Db::Sqlite(sqlite::Pool::open(rt, dir, connections).await?))
            }
            Database::Postgres(url) => Ok(Db::Postgres(
                postgres::Pool::open(rt, url, connections).await?,
            )),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "sqlite",
            Db::Postgres(_) => "postgres",
        }
    }

    /// The pool's size (`--db-connections`).
    pub fn connections(&self) -> usize {
        match self {
            Db::Sqlite(pool) => pool.connections(),
            Db::Postgres(pool) => pool.connections(),
        }
    }

    /// The database calls under way (SQLite: on the blocking pool;
    /// PostgreSQL: queries sent and not answered).
    pub fn calls(&self) -> &Calls {
        match self {
            Db::Sqlite(pool) => pool.calls(),
            Db::Postgres(pool) => pool.calls(),
        }
    }

    pub async fn user(&self, id: i64) -> Result<Option<User>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.user(id).await,
            Db::Postgres(pool) => pool.user(id).await,
        }
    }

    pub async fn insert_user(&self, name: String, email: String) -> Result<User, DbError> {
        match self {
            Db::Sqlite(pool) => pool.insert_user(name, email).await,
            Db::Postgres(pool) => pool.insert_user(name, email).await,
        }
    }

    pub async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.fortunes().await,
            Db::Postgres(pool) => pool.fortunes().await,
        }
    }

    /// Up to `count` users from id `first` on, in id order.
    pub async fn users_from(&self, first: i64, count: i64) -> Result<Vec<User>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.users_from(first, count).await,
            Db::Postgres(pool) => pool.users_from(first, count).await,
        }
    }
}

/// Database calls under way, and the most there have been at once (what
/// `/metrics` shows, and what the tests check the pool bounds).
#[derive(Debug, Default)]
pub struct Calls {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Calls {
    /// Counts a call until the guard drops.
    pub fn enter(calls: &Arc<Calls>) -> CallGuard {
        let now = calls.now.fetch_add(1, Ordering::Relaxed) + 1;
        calls.max.fetch_max(now, Ordering::Relaxed);
        CallGuard(Arc::clone(calls))
    }

    pub fn now(&self) -> usize {
        self.now.load(Ordering::Relaxed)
    }

    pub fn max(&self) -> usize {
        self.max.load(Ordering::Relaxed)
    }
}

/// One call of [`Calls`].
pub struct CallGuard(Arc<Calls>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_counts_those_under_way_and_the_most_at_once() {
        let calls = Arc::new(Calls::default());
        let first = Calls::enter(&calls);
        let second = Calls::enter(&calls);
        assert_eq!((calls.now(), calls.max()), (2, 2));
        drop(first);
        assert_eq!((calls.now(), calls.max()), (1, 2));
        drop(second);
        let third = Calls::enter(&calls);
        assert_eq!((calls.now(), calls.max()), (1, 2));
        drop(third);
        assert_eq!((calls.now(), calls.max()), (0, 2));
    }

    #[test]
    fn an_error_displays_its_reason() {
        assert_eq!(DbError::Unavailable("down".into()).to_string(), "down");
        assert_eq!(DbError::Failed("bad".into()).to_string(), "bad");
    }
}
