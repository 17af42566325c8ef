//! Child processes, as tokio's `tokio::process`: [`Command`] builds and
//! spawns one, [`Child`] waits for it, kills it and holds its pipes
//! ([`ChildStdin`], [`ChildStdout`], [`ChildStderr`]), which are async
//! streams on the runtime's reactor.
//!
//! ```
//! use std::process::Stdio;
//! use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
//! use weft::process::Command;
//!
//! weft::runtime::Runtime::new()?.block_on(async {
//!     let out = Command::new("echo").arg("hello").output().await?;
//!     assert!(out.status.success());
//!     assert_eq!(out.stdout, b"hello\n");
//!
//!     let mut cat = Command::new("cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn()?;
//!     let mut stdin = cat.stdin.take().unwrap();
//!     stdin.write_all(b"round trip").await?;
//!     drop(stdin); // cat sees the end of its input
//!     let mut echoed = String::new();
//!     cat.stdout.take().unwrap().read_to_string(&mut echoed).await?;
//!     assert_eq!(echoed, "round trip");
//!     assert!(cat.wait().await?.success());
//!     Ok::<(), std::io::Error>(())
//! })?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # How a child is waited for
//!
//! No thread per child, and no thread at all in the usual case. Right
//! after `spawn`, weft opens a *pidfd* for the child
//! (`pidfd_open(2)`, Linux 5.3 and later) and registers it with the
//! runtime's reactor through [`AsyncFd`](crate::io::unix::AsyncFd): it
//! becomes readable when the child exits. A task waiting in
//! [`Child::wait`] sleeps until then, and then reaps the child with
//! `waitpid(pid, WNOHANG)` (through `std::process::Child::try_wait`, so
//! `std` keeps the status and the pid is never waited for twice).
//!
//! **Fallback.** Where `pidfd_open` fails (a kernel older than 5.3, a
//! seccomp filter that refuses it, no descriptor left), a child is waited
//! for through `SIGCHLD` instead: it listens with
//! [`signal::unix::signal`](crate::signal::unix::signal) (one process-wide
//! handler, shared with every other listener), created *before* its first
//! `waitpid`, so an exit between the two is still reported, and tries its
//! `waitpid(pid, WNOHANG)` again at each delivery. That installs a
//! `SIGCHLD` handler for the rest of the process (with `SA_RESTART`), as
//! tokio always does. `kill` and the pipes work the same either way.
//!
//! # Invariants
//!
//! - **No zombies.** A [`Child`] dropped before its status was collected
//!   (by [`wait`](Child::wait) or [`try_wait`](Child::try_wait)) is
//!   handed to an *orphan* task spawned on the runtime the child was
//!   spawned on: it owns the pidfd (or the `SIGCHLD` listener), waits for
//!   the exit and reaps the child. With
//!   [`kill_on_drop(true)`](Command::kill_on_drop) the child is sent
//!   `SIGKILL` first (tokio's semantics); otherwise it keeps running, as
//!   with `std`. If that runtime has shut down (or shuts down while the
//!   orphan waits), the child goes to a process-wide list served by one
//!   thread, `weft-reaper`, started on demand: it tries every child on the
//!   list at each `SIGCHLD` (and at least once a second), and exits when
//!   the list is empty.
//! - **A pid is waited for only through its `std::process::Child`**, so a
//!   status is collected once and kept: `wait` and `try_wait` return it
//!   again, and a kill after the reap sends no signal (the pid may belong
//!   to another process by then). Code elsewhere in the process that reaps
//!   any child (`waitpid(-1, ..)`) breaks this, as with `std`: `wait` then
//!   fails with the OS's `ECHILD`.
//! - **Errors are `std`'s.** A program that does not exist is an
//!   `io::Error` of kind `NotFound` from `spawn` (and from `status` and
//!   `output`), as `std` reports it.
//! - **A child's pipes belong to the runtime `spawn` ran in**: they are on
//!   that runtime's reactor, so they work (from any runtime or thread)
//!   while it runs, and fail with an error once it has shut down. `wait`
//!   outlives it, as on tokio: a wait whose pidfd's runtime has shut down
//!   opens a new pidfd on the runtime it is polled in (and fails with the
//!   shutdown error outside any runtime); the child is reaped either way
//!   (above).
//! - **Pipes are non-blocking and on the reactor** of that runtime; `into_owned_fd` (and the conversion into
//!   [`Stdio`] for another child) takes a pipe off the
//!   reactor and gives it back in blocking mode.
//! - **`spawn` needs a runtime**: it panics outside one, saying where to
//!   call it from (the pidfd and the pipes register with its reactor).
//!   `status` and `output` spawn when called, not when first polled, as
//!   tokio's.

mod child;
mod orphan;
mod pipe;
mod reap;

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{CommandArgs, CommandEnvs, ExitStatus, Output, Stdio};

pub use child::Child;
pub use pipe::{ChildStderr, ChildStdin, ChildStdout};

/// A process builder, as tokio's `Command`: `std::process::Command`'s
/// builder methods, and [`spawn`](Command::spawn),
/// [`status`](Command::status) and [`output`](Command::output) that give a
/// [`Child`] or a future.
///
/// By default the child inherits this process's environment, working
/// directory, stdin, stdout and stderr; [`output`](Command::output) pipes
/// stdout and stderr.
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
}

impl Command {
    /// A command to run `program`, with no arguments. A name without a
    /// `/` is looked up in `PATH` (the child's, if set with
    /// [`env`](Command::env)).
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        Command::from(std::process::Command::new(program))
    }

    /// The `std` command this one builds.
    pub fn as_std(&self) -> &std::process::Command {
        &self.std
    }

    /// The `std` command this one builds, to set what only `std` (or an
    /// extension trait) offers.
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// The `std` command, without the [`kill_on_drop`](Command::kill_on_drop)
    /// setting (`std` has none).
    pub fn into_std(self) -> std::process::Command {
        self.std
    }

    /// Adds one argument.
    pub fn arg<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds several arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.std.args(args);
        self
    }

    /// Sets an environment variable of the child.
    pub fn env<K, V>(&mut self, key: K, val: V) -> &mut Command
    where
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.env(key, val);
        self
    }

    /// Sets several environment variables of the child.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable from the child's environment.
    pub fn env_remove<K: AsRef<OsStr>>(&mut self, key: K) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Starts the child with an empty environment (plus what
    /// [`env`](Command::env) adds after).
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the child's working directory.
    pub fn current_dir<P: AsRef<Path>>(&mut self, dir: P) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// The child's stdin: [`Stdio::piped`] gives [`Child::stdin`].
    pub fn stdin<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdin(cfg);
        self
    }

    /// The child's stdout: [`Stdio::piped`] gives [`Child::stdout`].
    pub fn stdout<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stdout(cfg);
        self
    }

    /// The child's stderr: [`Stdio::piped`] gives [`Child::stderr`].
    pub fn stderr<T: Into<Stdio>>(&mut self, cfg: T) -> &mut Command {
        self.std.stderr(cfg);
        self
    }

    /// Whether a [`Child`] dropped before its exit was collected is sent
    /// `SIGKILL` (default `false`: it keeps running, as with `std`). Either
    /// way it is reaped (the module's doc). Also applies to the futures of
    /// [`status`](Command::status) and [`output`](Command::output) dropped
    /// early.
    pub fn kill_on_drop(&mut self, kill_on_drop: bool) -> &mut Command {
        self.kill_on_drop = kill_on_drop;
        self
    }

    /// The [`kill_on_drop`](Command::kill_on_drop) setting.
    pub fn get_kill_on_drop(&self) -> bool {
        self.kill_on_drop
    }

    /// Sets the child's user id (`setuid` before `exec`).
    pub fn uid(&mut self, id: u32) -> &mut Command {
        self.std.uid(id);
        self
    }

    /// Sets the child's group id (`setgid` before `exec`).
    pub fn gid(&mut self, id: u32) -> &mut Command {
        self.std.gid(id);
        self
    }

    /// Sets the child's `argv[0]` (by default the program as given).
    pub fn arg0<S: AsRef<OsStr>>(&mut self, arg: S) -> &mut Command {
        self.std.arg0(arg);
        self
    }

    /// Runs `f` in the child after `fork` and before `exec`: `std`'s
    /// [`CommandExt::pre_exec`].
    ///
    /// # Safety
    ///
    /// As `std`'s: `f` runs in a copy of this process that has one thread,
    /// where any lock another thread held at the fork stays held. It may
    /// only do what is async-signal-safe (no allocation, no locks), and it
    /// must not touch the memory the parent shares with it in a way that
    /// breaks the parent's invariants.
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller upholds `pre_exec`'s contract, which is this
        // function's (see `# Safety` above).
        unsafe { self.std.pre_exec(f) };
        self
    }

    /// Puts the child in process group `pgroup` (0: a new group whose id is
    /// the child's pid), so a signal to the group reaches it and what it
    /// starts.
    pub fn process_group(&mut self, pgroup: i32) -> &mut Command {
        self.std.process_group(pgroup);
        self
    }

    /// The program the command runs.
    pub fn get_program(&self) -> &OsStr {
        self.std.get_program()
    }

    /// The arguments, without the program.
    pub fn get_args(&self) -> CommandArgs<'_> {
        self.std.get_args()
    }

    /// The environment changes made with `env`, `envs` and `env_remove`
    /// (`None`: removed).
    pub fn get_envs(&self) -> CommandEnvs<'_> {
        self.std.get_envs()
    }

    /// The working directory set with [`current_dir`](Command::current_dir).
    pub fn get_current_dir(&self) -> Option<&Path> {
        self.std.get_current_dir()
    }

    /// Starts the child now, its pipes and its exit registered with the
    /// current runtime's reactor.
    ///
    /// A program that cannot be found is an error of kind `NotFound`; the
    /// OS's other errors (`PermissionDenied`, `WouldBlock` at the process
    /// limit) come as they are.
    ///
    /// # Panics
    ///
    /// Outside a runtime context: call it from a task, inside
    /// `Runtime::block_on`, or under a `Runtime::enter` guard.
    #[track_caller]
    pub fn spawn(&mut self) -> io::Result<Child> {
        let handle = match crate::runtime::Handle::try_current() {
            Ok(handle) => handle,
            Err(_) => crate::runtime::context::no_runtime(format_args!(
                "`weft::process::Command::spawn` called outside of a weft runtime: call it from \
                 a task, inside `Runtime::block_on`, or while a `Runtime::enter` guard is alive"
            )),
        };
        let std = self.std.spawn()?;
        Child::new(std, self.kill_on_drop, handle)
    }

    /// Spawns the child now (as [`spawn`](Command::spawn), so outside a
    /// runtime this panics) and returns a future of its exit status. Pipes
    /// asked for are closed at once; by default the child inherits stdin,
    /// stdout and stderr. Dropping the future before the exit drops the
    /// [`Child`] (so [`kill_on_drop`](Command::kill_on_drop) applies).
    #[track_caller]
    pub fn status(&mut self) -> impl Future<Output = io::Result<ExitStatus>> + use<> {
        let child = self.spawn();
        async move {
            let mut child = child?;
            drop(child.stdin.take());
            drop(child.stdout.take());
            drop(child.stderr.take());
            child.wait().await
        }
    }

    /// Spawns the child now with stdout and stderr piped, whatever they
    /// were set to (tokio's rule, unlike `std`'s), and returns a future of
    /// its exit status and everything it wrote
    /// ([`Child::wait_with_output`]). Stdin is as set (inherited by
    /// default), and closed before the wait. Outside a runtime this panics,
    /// as [`spawn`](Command::spawn).
    #[track_caller]
    pub fn output(&mut self) -> impl Future<Output = io::Result<Output>> + use<> {
        self.std.stdout(Stdio::piped());
        self.std.stderr(Stdio::piped());
        let child = self.spawn();
        async move { child?.wait_with_output().await }
    }
}

impl From<std::process::Command> for Command {
    fn from(std: std::process::Command) -> Command {
        Command {
            std,
            kill_on_drop: false,
        }
    }
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command")
            .field("std", &self.std)
            .field("kill_on_drop", &self.kill_on_drop)
            .finish()
    }
}

/// Never called: a compile-time check (emptying its body, a mutant,
/// changes no behaviour).
#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync + Unpin>() {}
    is::<Command>();
    is::<Child>();
    is::<ChildStdin>();
    is::<ChildStdout>();
    is::<ChildStderr>();
}
