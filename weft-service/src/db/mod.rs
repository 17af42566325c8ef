//! The two databases behind one interface.
//!
//! - SQLite (`sqlite.rs`), the default: a file under `--data-dir`, every
//!   query on the runtime's blocking pool with a connection from a small
//!   pool of open ones.
//! - PostgreSQL (`postgres.rs`): tokio-postgres over the runtime's own TCP
//!   stream, a fixed set of connections reconnected on failure.
//!
//! Both create and seed their tables on first use (`seed.rs`): `users`
//! (10,000 rows), `fortune` (TechEmpower's 12) and `world` (TechEmpower's
//! `World`: 10,000 rows of `id` and `randomNumber`). The `World` rows are
//! read one statement per row (TechEmpower's rule: no `IN (…)` batching),
//! counted in [`WorldStatements`]. Errors come back as
//! [`DbError`]: `Unavailable` (the database is down, unreachable, busy or
//! timed out: the request gets 503 and a later one may succeed) or
//! `Failed` (anything else: 500).

pub mod postgres;
pub mod seed;
pub mod sqlite;

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use serde::Serialize;

use crate::args::Database;
use crate::rt::Rt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub email: String,
}

/// A row of TechEmpower's `World` table, serialised as TechEmpower names
/// it: `{"id":…,"randomNumber":…}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
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

    /// The `World` rows with `ids`, in that order: one `SELECT` per id
    /// (PostgreSQL: pipelined on one connection; SQLite: in one call).
    pub async fn worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.worlds(ids).await,
            Db::Postgres(pool) => pool.worlds(ids).await,
        }
    }

    /// Reads the `World` rows with `ids` (one `SELECT` each), gives each
    /// a new `randomNumber` (one that differs from the old) and writes it
    /// back (one `UPDATE` each); the rows as written.
    pub async fn update_worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.update_worlds(ids).await,
            Db::Postgres(pool) => pool.update_worlds(ids).await,
        }
    }

    /// Every `World` row, in id order, in one query (what the cache of
    /// `/cached-queries` loads).
    pub async fn all_worlds(&self) -> Result<Vec<World>, DbError> {
        match self {
            Db::Sqlite(pool) => pool.all_worlds().await,
            Db::Postgres(pool) => pool.all_worlds().await,
        }
    }

    /// The `World` statements run so far.
    pub fn world_statements(&self) -> &WorldStatements {
        match self {
            Db::Sqlite(pool) => pool.world_statements(),
            Db::Postgres(pool) => pool.world_statements(),
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

/// The single-row `World` statements that have completed: `SELECT`s by
/// id (`/db`, `/queries`, `/updates`) and `UPDATE`s by id (`/updates`),
/// each one statement for one row. `/metrics` shows them; the tests check
/// one statement per row with them (and, on PostgreSQL, with
/// `pg_stat_statements`).
#[derive(Debug, Default)]
pub struct WorldStatements {
    selects: AtomicU64,
    updates: AtomicU64,
}

impl WorldStatements {
    pub fn add_selects(&self, n: usize) {
        self.selects.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn add_updates(&self, n: usize) {
        self.updates.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn selects(&self) -> u64 {
        self.selects.load(Ordering::Relaxed)
    }

    pub fn updates(&self) -> u64 {
        self.updates.load(Ordering::Relaxed)
    }
}

/// Database calls under way, and the most there have been at once (what
/// `/metrics` shows, and what the tests check the pool bounds).
#[derive(Debug, Default)]
pub struct Calls {
    now: AtomicUsize,
    max: AtomicUsize,
    total: AtomicU64,
}

impl Calls {
    /// Counts a call until the guard drops.
    pub fn enter(calls: &Arc<Calls>) -> CallGuard {
        calls.total.fetch_add(1, Ordering::Relaxed);
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

    /// The calls made so far.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
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
        assert_eq!(calls.total(), 3);
    }

    #[test]
    fn an_error_displays_its_reason() {
        assert_eq!(DbError::Unavailable("down".into()).to_string(), "down");
        assert_eq!(DbError::Failed("bad".into()).to_string(), "bad");
    }
}
