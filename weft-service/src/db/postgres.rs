//! PostgreSQL through tokio-postgres over the runtime's own TCP stream.
//!
//! On weft the stream is a `weft::net::TcpStream` (tokio's I/O traits from
//! weft's `tokio-io` feature), handed to `Config::connect_raw`, and the
//! connection's driver future is a weft task: no tokio runtime and no
//! bridge on the database path. On tokio the same code takes a
//! `tokio::net::TcpStream`.
//!
//! The pool is a fixed set of slots, used round-robin. A slot holds one
//! open connection (tokio-postgres pipelines the queries of concurrent
//! requests on it) with its prepared statements, or nothing. A request
//! finding its slot empty or its connection closed connects (under the
//! slot's lock, so a burst does not open one connection per request);
//! any `Unavailable` error empties the slot. So while the server is down
//! each request costs one refused connect and gets 503, and the first
//! request after it is back reconnects.
//!
//! Bounded as SQLite is, without its permits: at most `connections`
//! connections are open, and a request waiting for its answer is a task
//! parked on the connection's socket, never a thread; tokio-postgres
//! queues the queries of one connection in order.
//!
//! The first connection that succeeds creates and seeds the tables (under
//! an advisory lock: several services may start on one database at once).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls, Statement};

use futures_util::future::try_join_all;

use super::seed::{self, FORTUNES, USERS, WORLDS};
use super::{Calls, DbError, Fortune, User, World, WorldStatements};
use crate::rt::Rt;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// The key of the advisory lock that serialises seeding.
const SEED_LOCK: i64 = 0x7765_6674_0037;

pub struct Pool {
    rt: Rt,
    config: Config,
    host: String,
    port: u16,
    slots: Box<[Mutex<Option<Arc<Conn>>>]>,
    next: AtomicUsize,
    seeded: AtomicBool,
    /// Queries sent and not answered.
    calls: Arc<Calls>,
    world_statements: WorldStatements,
}

/// One connection and its prepared statements.
struct Conn {
    client: Client,
    user: Statement,
    insert_user: Statement,
    fortunes: Statement,
    users_from: Statement,
    world: Statement,
    update_world: Statement,
    all_worlds: Statement,
}

impl Pool {
    pub async fn open(rt: Rt, url: &str, connections: usize) -> Result<Arc<Pool>, String> {
        let config: Config = url
            .parse()
            .map_err(|e| format!("--database {url:?}: {e}"))?;
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(host)) => host.clone(),
            Some(Host::Unix(_)) => return Err(format!("--database {url:?}: TCP hosts only")),
            None => "localhost".to_owned(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let pool = Arc::new(Pool {
            rt,
            config,
            host,
            port,
            slots: (0..connections.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            seeded: AtomicBool::new(false),
            calls: Arc::default(),
            world_statements: WorldStatements::default(),
        });
        if let Err(e) = pool.conn().await {
            eprintln!(
                "weft-service: PostgreSQL at {}:{} not usable yet ({e}); answering 503 until it is",
                pool.host, pool.port
            );
        }
        Ok(pool)
    }

    pub async fn user(&self, id: i64) -> Result<Option<User>, DbError> {
        let (slot, conn) = self.conn().await?;
        let row = self
            .bounded((slot, &conn), conn.client.query_opt(&conn.user, &[&id]))
            .await?;
        Ok(row.map(|row| User {
            id: row.get(0),
            name: row.get(1),
            email: row.get(2),
        }))
    }

    pub async fn insert_user(&self, name: String, email: String) -> Result<User, DbError> {
        let (slot, conn) = self.conn().await?;
        let row = self
            .bounded(
                (slot, &conn),
                conn.client.query_one(&conn.insert_user, &[&name, &email]),
            )
            .await?;
        Ok(User {
            id: row.get(0),
            name,
            email,
        })
    }

    pub async fn fortunes(&self) -> Result<Vec<Fortune>, DbError> {
        let (slot, conn) = self.conn().await?;
        let rows = self
            .bounded((slot, &conn), conn.client.query(&conn.fortunes, &[]))
            .await?;
        Ok(rows
            .iter()
            .map(|row| Fortune {
                id: row.get(0),
                message: row.get(1),
            })
            .collect())
    }

    pub async fn users_from(&self, first: i64, count: i64) -> Result<Vec<User>, DbError> {
        let (slot, conn) = self.conn().await?;
        let rows = self
            .bounded(
                (slot, &conn),
                conn.client.query(&conn.users_from, &[&first, &count]),
            )
            .await?;
        Ok(rows
            .iter()
            .map(|row| User {
                id: row.get(0),
                name: row.get(1),
                email: row.get(2),
            })
            .collect())
    }

    /// One `SELECT` per id, all sent at once on one connection
    /// (tokio-postgres pipelines them), answered in order.
    pub async fn worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.conn().await?;
        let selects = try_join_all(ids.iter().map(|&id| {
            let conn = &conn;
            async move { conn.client.query_one(&conn.world, &[&id]).await }
        }));
        let rows = self.bounded((slot, &conn), selects).await?;
        self.world_statements.add_selects(rows.len());
        Ok(rows.iter().map(world_from_row).collect())
    }

    /// One `SELECT` per id (pipelined), then one `UPDATE` per row
    /// (pipelined), each its own statement outside a transaction: an
    /// `UPDATE` locks one row only, so concurrent requests updating the
    /// same rows in other orders wait for each other but never deadlock.
    pub async fn update_worlds(&self, ids: Vec<i32>) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.conn().await?;
        let selects = try_join_all(ids.iter().map(|&id| {
            let conn = &conn;
            async move { conn.client.query_one(&conn.world, &[&id]).await }
        }));
        let rows = self.bounded((slot, &conn), selects).await?;
        self.world_statements.add_selects(rows.len());
        let mut worlds: Vec<World> = rows.iter().map(world_from_row).collect();
        for world in &mut worlds {
            world.random_number = seed::new_random_number(world.random_number);
        }
        let updates = try_join_all(worlds.iter().map(|&World { id, random_number }| {
            let conn = &conn;
            async move {
                conn.client
                    .execute(&conn.update_world, &[&random_number, &id])
                    .await
            }
        }));
        let updated = self.bounded((slot, &conn), updates).await?;
        self.world_statements.add_updates(updated.len());
        if let Some(missing) = updated.iter().position(|rows| *rows != 1) {
            return Err(DbError::Failed(format!(
                "PostgreSQL: no World row {} to update",
                worlds[missing].id
            )));
        }
        Ok(worlds)
    }

    pub async fn all_worlds(&self) -> Result<Vec<World>, DbError> {
        let (slot, conn) = self.conn().await?;
        let rows = self
            .bounded((slot, &conn), conn.client.query(&conn.all_worlds, &[]))
            .await?;
        Ok(rows.iter().map(world_from_row).collect())
    }

    pub fn world_statements(&self) -> &WorldStatements {
        &self.world_statements
    }

    pub fn calls(&self) -> &Calls {
        &self.calls
    }

    pub fn connections(&self) -> usize {
        self.slots.len()
    }

    /// The next slot's connection, connecting if it has none or its
    /// connection has closed.
    async fn conn(&self) -> Result<(usize, Arc<Conn>), DbError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        let mut slot = self.slots[index].lock().await;
        if let Some(conn) = slot.as_ref().filter(|conn| !conn.client.is_closed()) {
            return Ok((index, Arc::clone(conn)));
        }
        *slot = None;
        let conn = Arc::new(self.connect().await?);
        *slot = Some(Arc::clone(&conn));
        Ok((index, conn))
    }

    /// `query` within `QUERY_TIMEOUT`; an `Unavailable` outcome empties
    /// the slot, so the next request on it reconnects.
    async fn bounded<T>(
        &self,
        (slot, conn): (usize, &Arc<Conn>),
        query: impl Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> Result<T, DbError> {
        let call = Calls::enter(&self.calls);
        let result = match self.rt.timeout(QUERY_TIMEOUT, query).await {
            Some(result) => result.map_err(classify),
            None => Err(DbError::Unavailable(format!(
                "PostgreSQL: no answer within {QUERY_TIMEOUT:?}"
            ))),
        };
        drop(call);
        if let Err(DbError::Unavailable(_)) = &result {
            let mut slot = self.slots[slot].lock().await;
            // Not a newer connection another request made meanwhile.
            if slot.as_ref().is_some_and(|held| Arc::ptr_eq(held, conn)) {
                *slot = None;
            }
        }
        result
    }

    async fn connect(&self) -> Result<Conn, DbError> {
        let handshake = async {
            match self.rt {
                Rt::Weft => {
                    let stream =
                        weft::net::TcpStream::connect((self.host.as_str(), self.port)).await?;
                    stream.set_nodelay(true)?;
                    self.handshake(stream).await
                }
                Rt::Tokio => {
                    let stream =
                        tokio::net::TcpStream::connect((self.host.as_str(), self.port)).await?;
                    stream.set_nodelay(true)?;
                    self.handshake(stream).await
                }
            }
        };
        let mut client = match self.rt.timeout(CONNECT_TIMEOUT, handshake).await {
            Some(result) => result?,
            None => {
                return Err(DbError::Unavailable(format!(
                    "PostgreSQL at {}:{}: no connection within {CONNECT_TIMEOUT:?}",
                    self.host, self.port
                )));
            }
        };
        if !self.seeded.load(Ordering::Acquire) {
            create_and_seed(&mut client).await.map_err(classify)?;
            self.seeded.store(true, Ordering::Release);
        }
        let prepare = async {
            Ok::<_, tokio_postgres::Error>(Conn {
                user: client
                    .prepare("SELECT id, name, email FROM users WHERE id = $1")
                    .await?,
                insert_user: client
                    .prepare("INSERT INTO users (name, email) VALUES ($1, $2) RETURNING id")
                    .await?,
                fortunes: client.prepare("SELECT id, message FROM fortune").await?,
                users_from: client
                    .prepare(
                        "SELECT id, name, email FROM users WHERE id >= $1 ORDER BY id LIMIT $2",
                    )
                    .await?,
                world: client
                    .prepare("SELECT id, randomnumber FROM world WHERE id = $1")
                    .await?,
                update_world: client
                    .prepare("UPDATE world SET randomnumber = $1 WHERE id = $2")
                    .await?,
                all_worlds: client
                    .prepare("SELECT id, randomnumber FROM world ORDER BY id")
                    .await?,
                client,
            })
        };
        prepare.await.map_err(classify)
    }

    /// The startup handshake on `stream`; the connection's driver future
    /// becomes a task of the runtime.
    async fn handshake<S>(&self, stream: S) -> Result<Client, DbError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        // Whatever fails here (refused, authentication, an unknown
        // database) leaves the database unusable for now: 503.
        let (client, connection) = self
            .config
            .connect_raw(stream, NoTls)
            .await
            .map_err(|e| DbError::Unavailable(format!("PostgreSQL: {e}")))?;
        self.rt.spawn(async move {
            // An error here also closes the client: the pool sees
            // `is_closed` and reconnects.
            let _ = connection.await;
        });
        Ok(client)
    }
}

impl From<std::io::Error> for DbError {
    fn from(error: std::io::Error) -> DbError {
        DbError::Unavailable(format!("PostgreSQL: {error}"))
    }
}

/// Creates the tables if missing and seeds the empty ones, in one
/// transaction under an advisory lock.
async fn create_and_seed(client: &mut Client) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SEED_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS users (
             id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
             name TEXT NOT NULL, email TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS fortune (id INTEGER PRIMARY KEY, message TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS world (id INTEGER PRIMARY KEY, randomnumber INTEGER NOT NULL);",
    )
    .await?;
    let count = |table: &'static str| {
        let tx = &tx;
        async move {
            let row = tx
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                .await?;
            Ok::<i64, tokio_postgres::Error>(row.get(0))
        }
    };
    if count("users").await? == 0 {
        let (ids, (names, emails)): (Vec<i64>, (Vec<String>, Vec<String>)) =
            (1..=USERS).map(|id| (id, seed::user(id))).unzip();
        tx.execute(
            "INSERT INTO users (id, name, email)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])",
            &[&ids, &names, &emails],
        )
        .await?;
        // Ids given explicitly do not advance the identity sequence.
        tx.execute(
            "SELECT setval(pg_get_serial_sequence('users', 'id'), (SELECT max(id) FROM users))",
            &[],
        )
        .await?;
    }
    if count("fortune").await? == 0 {
        let ids: Vec<i32> = (1..=FORTUNES.len() as i32).collect();
        let messages: Vec<&str> = FORTUNES.to_vec();
        tx.execute(
            "INSERT INTO fortune (id, message) SELECT * FROM unnest($1::int[], $2::text[])",
            &[&ids, &messages],
        )
        .await?;
    }
    if count("world").await? == 0 {
        let ids: Vec<i32> = (1..=WORLDS).collect();
        let numbers: Vec<i32> = ids.iter().map(|_| seed::random_number()).collect();
        tx.execute(
            "INSERT INTO world (id, randomnumber) SELECT * FROM unnest($1::int[], $2::int[])",
            &[&ids, &numbers],
        )
        .await?;
    }
    tx.commit().await
}

fn world_from_row(row: &tokio_postgres::Row) -> World {
    World {
        id: row.get(0),
        random_number: row.get(1),
    }
}

/// A closed connection, an I/O error, or a server that is shutting down,
/// starting or out of connections is `Unavailable`; any other server
/// error is `Failed`.
fn classify(error: tokio_postgres::Error) -> DbError {
    let message = format!("PostgreSQL: {error}");
    let unavailable = match error.code() {
        Some(code) => {
            let code = code.code();
            // connection exceptions, insufficient resources (too many
            // connections), operator intervention (shutting down, starting).
            // Each `||` made `&&` (mutants) passes the tests: only `57P`
            // (a stopped server) is one a test can make the server send.
            code.starts_with("08") || code.starts_with("53") || code.starts_with("57P")
        }
        None => {
            // `||` made `&&` (a mutant) passes the tests: a query meets a
            // closed connection only if it closes between `conn`'s check
            // and the answer, a moment no test can time.
            error.is_closed()
                || std::error::Error::source(&error).is_some_and(|s| s.is::<std::io::Error>())
        }
    };
    if unavailable {
        DbError::Unavailable(message)
    } else {
        DbError::Failed(message)
    }
}
