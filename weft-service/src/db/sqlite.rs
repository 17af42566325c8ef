//! The embedded database: SQLite in a file, every call on the runtime's
//! blocking pool, at most `connections` calls at once.
//!
//! A call first takes one of `connections` permits, waiting for it
//! asynchronously (a task, not a thread, waits), and holds it until its
//! blocking task has finished, even if the request is dropped meanwhile:
//! so at most `connections` blocking tasks run or wait in the runtime's
//! pool, and a latency spike queues requests instead of growing the pool
//! by a thread per waiting request. The blocking task takes an open
//! connection from `idle` (or opens one), runs, and puts it back; at most
//! `connections` are ever open. A connection is used by one blocking
//! thread at a time, so its prepared-statement cache needs no lock. WAL mode lets readers run beside the one writer; a writer that
//! finds the database locked waits up to `BUSY_TIMEOUT`, then the request
//! gets 503.
//!
//! Kept open for speed: opening a connection per call costs an `open`,
//! the schema read and the statement's preparation every time (a point
//! read's median 3-5× slower over HTTP,
//! `docs/experiments.md#sqlite-connections`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};
use tokio::sync::Semaphore;

use super::seed::{self, FORTUNES, USERS, WORLDS};
use super::{Calls, DbError, Fortune, User, World, WorldStatements};
use crate::rt::Rt;

const FILE_NAME: &str = "weft-service.sqlite3";
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct Pool {
    rt: Rt,
    path: PathBuf,
    /// How many calls may be on the blocking pool at once, and the most
    /// connections open.
    connections: usize,
    /// `connections` permits (`tokio::sync::Semaphore` needs no tokio
    /// runtime: the same on weft).
    permits: Arc<Semaphore>,
    idle: Mutex<Vec<Connection>>,
    /// The calls on the blocking pool (spawned and not finished).
    calls: Arc<Calls>,
    world_statements: Arc<WorldStatements>,
}

const SELECT_WORLD: &str = "SELECT id, randomNumber FROM world WHERE id = ?1";
const UPDATE_WORLD: &str = "UPDATE world SET randomNumber = ?1 WHERE id = ?2";

impl Pool {
    /// Opens (creating the directory and file if needed) and seeds; at
    /// most `connections` calls run at once.
    pub async fn open(rt: Rt, data_dir: &Path, connections: usize) -> Result<Arc<Pool>, String> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| format!("--data-dir {}: {e}", data_dir.display()))?;
        let connections = connections.max(1);
        let pool = Arc::new(Pool {
            rt,
            path: data_dir.join(FILE_NAME),
            connections,
            permits: Arc::new(Semaphore::new(connections)),
            idle: Mutex::new(Vec::with_capacity(connections)),
            calls: Arc::default(),
            world_statements: Arc::default(),
        });
        pool.call(create_and_seed)
            .await
            .map_err(|e| format!("SQLite database {}: {e}", pool.path.display()))?;
        Ok(pool)
    }

    pub async fn user(self: &Arc<Self>, id: i64) -> Result<Option<User>, DbError> {
        self.call(move |conn| {
            conn.prepare_cached("SELECT id, name, email FROM users WHERE id = ?1")?
                .query_row([id], user_from_row)
                .optional()
        })
        .await
    }

    pub async fn insert_user(
        self: &Arc<Self>,
        name: String,
        email: String,
    ) -> Result<User, DbError> {
        self.call(move |conn| {
            conn.prepare_cached("INSERT INTO users (name, email) VALUES (?1, ?2) RETURNING id")?
                .query_row(params![name, email], |row| row.get(0))
                .map(|id| User { id, name, email })
        })
        .await
    }

    pub async fn fortunes(self: &Arc<Self>) -> Result<Vec<Fortune>, DbError> {
        self.call(|conn| {
            conn.prepare_cached("SELECT id, message FROM fortune")?
                .query_map([], |row| {
                    Ok(Fortune {
                        id: row.get(0)?,
                        message: row.get(1)?,
                    })
                })?
                .collect()
        })
        .await
    }

    pub async fn users_from(
        self: &Arc<Self>,
        first: i64,
        count: i64,
    ) -> Result<Vec<User>, DbError> {
        self.call(move |conn| {
            conn.prepare_cached(
                "SELECT id, name, email FROM users WHERE id >= ?1 ORDER BY id LIMIT ?2",
            )?
            .query_map([first, count], user_from_row)?
            .collect()
        })
        .await
    }

    /// One `SELECT` per id, on one connection in one call.
    pub async fn worlds(self: &Arc<Self>, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        let counted = Arc::clone(&self.world_statements);
        self.call(move |conn| {
            let mut select = conn.prepare_cached(SELECT_WORLD)?;
            ids.iter()
                .map(|&id| {
                    let world = select.query_row([id], world_from_row);
                    counted.add_selects(1);
                    world
                })
                .collect()
        })
        .await
    }

    /// One `SELECT` and one `UPDATE` per id, in one write transaction
    /// (taken at once, `IMMEDIATE`: a read transaction that later writes
    /// could fail with `SQLITE_BUSY` without waiting).
    pub async fn update_worlds(self: &Arc<Self>, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        let counted = Arc::clone(&self.world_statements);
        self.call(move |conn| {
            let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
            let mut worlds = Vec::with_capacity(ids.len());
            {
                let mut select = tx.prepare_cached(SELECT_WORLD)?;
                for &id in &ids {
                    worlds.push(select.query_row([id], world_from_row)?);
                    counted.add_selects(1);
                }
                let mut update = tx.prepare_cached(UPDATE_WORLD)?;
                for world in &mut worlds {
                    world.random_number = seed::new_random_number(world.random_number);
                    update.execute([world.random_number, world.id])?;
                    counted.add_updates(1);
                }
            }
            tx.commit()?;
            Ok(worlds)
        })
        .await
    }

    pub async fn all_worlds(self: &Arc<Self>) -> Result<Vec<World>, DbError> {
        self.call(|conn| {
            conn.prepare_cached("SELECT id, randomNumber FROM world ORDER BY id")?
                .query_map([], world_from_row)?
                .collect()
        })
        .await
    }

    pub fn world_statements(&self) -> &WorldStatements {
        &self.world_statements
    }

    pub fn calls(&self) -> &Calls {
        &self.calls
    }

    pub fn connections(&self) -> usize {
        self.connections
    }

    /// Runs `f` with a connection on the blocking pool, once a permit is
    /// free.
    async fn call<R, F>(self: &Arc<Self>, f: F) -> Result<R, DbError>
    where
        F: FnOnce(&Connection) -> rusqlite::Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| DbError::Failed("SQLite pool closed".to_owned()))?;
        // Counted from before the spawn: a call waiting for a pool thread
        // holds one as much as a running one.
        let call = Calls::enter(&self.calls);
        let pool = Arc::clone(self);
        self.rt
            .spawn_blocking(move || {
                // Released when the call is over, whether or not the
                // request still waits for it: the count first, then the
                // permit (so the count never exceeds the permits).
                let _permit = permit;
                let _call = call;
                pool.with_connection(f)
            })
            .await
            .map_err(|panic| DbError::Failed(format!("SQLite call panicked: {panic}")))?
    }

    /// Blocking: takes an idle connection or opens one, runs `f`, puts it back.
    fn with_connection<R>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<R>,
    ) -> Result<R, DbError> {
        let idle = self.idle.lock().unwrap().pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.connect().map_err(classify)?,
        };
        let result = f(&conn).map_err(classify);
        let mut idle = self.idle.lock().unwrap();
        // Always true (so `<=` here, a mutant, is equivalent): a connection
        // is opened only when none is idle, by a call holding a permit, so
        // at most `connections` exist and the others are fewer than that.
        if idle.len() < self.connections {
            idle.push(conn);
        }
        result
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open(&self.path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(conn)
    }
}

fn world_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<World> {
    Ok(World {
        id: row.get(0)?,
        random_number: row.get(1)?,
    })
}

fn user_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<User> {
    Ok(User {
        id: row.get(0)?,
        name: row.get(1)?,
        email: row.get(2)?,
    })
}

/// Creates the tables if missing and seeds each one that is empty, in
/// one write transaction (a second process opening the same file waits).
fn create_and_seed(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS users (
             id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS fortune (id INTEGER PRIMARY KEY, message TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS world (id INTEGER PRIMARY KEY, randomNumber INTEGER NOT NULL);",
    )?;
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let count = |table: &str| -> rusqlite::Result<i64> {
        tx.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get(0)
        })
    };
    if count("users")? == 0 {
        let mut insert = tx.prepare("INSERT INTO users (id, name, email) VALUES (?1, ?2, ?3)")?;
        for id in 1..=USERS {
            let (name, email) = seed::user(id);
            insert.execute(params![id, name, email])?;
        }
    }
    if count("fortune")? == 0 {
        let mut insert = tx.prepare("INSERT INTO fortune (id, message) VALUES (?1, ?2)")?;
        for (id, message) in (1..).zip(FORTUNES) {
            insert.execute(params![id, message])?;
        }
    }
    if count("world")? == 0 {
        let mut insert = tx.prepare("INSERT INTO world (id, randomNumber) VALUES (?1, ?2)")?;
        for id in 1..=WORLDS {
            insert.execute([id, seed::random_number()])?;
        }
    }
    tx.commit()
}

/// Locked, busy, unopenable or failing storage is `Unavailable`.
fn classify(error: rusqlite::Error) -> DbError {
    let unavailable = matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::CannotOpen
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::ReadOnly
                | ErrorCode::OutOfMemory
        )
    );
    let message = format!("SQLite: {error}");
    if unavailable {
        DbError::Unavailable(message)
    } else {
        DbError::Failed(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call gets the connection the previous one put back (its TEMP
    /// table is still there): what keeps a point read fast.
    #[test]
    fn the_next_call_reuses_the_open_connection() {
        let dir = std::env::temp_dir().join(format!("weft-service-reuse-{}", std::process::id()));
        let rt = weft::runtime::Runtime::new().unwrap();
        let marks = rt.block_on(async {
            let pool = Pool::open(Rt::Weft, &dir, 1).await.unwrap();
            pool.call(|conn| conn.execute_batch("CREATE TEMP TABLE mark (x)"))
                .await
                .unwrap();
            pool.call(|conn| {
                conn.query_row("SELECT count(*) FROM temp.mark", [], |row| {
                    row.get::<_, i64>(0)
                })
            })
            .await
        });
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            marks.expect("the TEMP table of the connection kept open"),
            0
        );
    }
}
