//! `tokio::process` on weft: children reaped on weft's reactor (a pidfd,
//! or `SIGCHLD`), their pipes on the reactor. [`Command`], [`Child`] and
//! the pipes wrap weft's, for tokio's I/O traits.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Output, Stdio};

use crate::io_adapt::{impl_async_read, impl_async_write, impl_fd, wrapper};

wrapper!(
    /// The child's standard input.
    ChildStdin,
    weft::process::ChildStdin
);
wrapper!(
    /// The child's standard output.
    ChildStdout,
    weft::process::ChildStdout
);
wrapper!(
    /// The child's standard error.
    ChildStderr,
    weft::process::ChildStderr
);
impl_async_write!(ChildStdin, inner);
impl_async_read!(ChildStdout, inner);
impl_async_read!(ChildStderr, inner);
impl_fd!(ChildStdin);
impl_fd!(ChildStdout);
impl_fd!(ChildStderr);

macro_rules! pipe_std {
    ($ty:ident, $std:ty) => {
        impl $ty {
            /// The pipe from std's child handle.
            pub fn from_std(inner: $std) -> io::Result<$ty> {
                weft::process::$ty::from_std(inner).map($ty::from)
            }

            /// The pipe's descriptor, leaving the reactor.
            pub fn into_owned_fd(self) -> io::Result<std::os::fd::OwnedFd> {
                self.inner.into_owned_fd()
            }
        }
    };
}

pipe_std!(ChildStdin, std::process::ChildStdin);
pipe_std!(ChildStdout, std::process::ChildStdout);
pipe_std!(ChildStderr, std::process::ChildStderr);

/// A process builder, as `std::process::Command`.
#[derive(Debug)]
pub struct Command {
    inner: weft::process::Command,
}

macro_rules! forward {
    ($(#[$doc:meta] fn $name:ident $(<$($g:ident: $b:path),*>)? ($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[$doc]
            pub fn $name $(<$($g: $b),*>)? (&mut self, $($arg: $ty),*) -> &mut Command {
                self.inner.$name($($arg),*);
                self
            }
        )*
    };
}

impl Command {
    /// A command running `program`.
    pub fn new<S: AsRef<OsStr>>(program: S) -> Command {
        weft::process::Command::new(program).into()
    }

    forward! {
        /// Adds an argument.
        fn arg<S: AsRef<OsStr>>(arg: S);
        /// Sets an environment variable.
        fn env<K: AsRef<OsStr>, V: AsRef<OsStr>>(key: K, val: V);
        /// Removes an environment variable.
        fn env_remove<K: AsRef<OsStr>>(key: K);
        /// Clears the environment.
        fn env_clear();
        /// The working directory.
        fn current_dir<P: AsRef<Path>>(dir: P);
        /// The child's standard input.
        fn stdin<T: Into<Stdio>>(cfg: T);
        /// The child's standard output.
        fn stdout<T: Into<Stdio>>(cfg: T);
        /// The child's standard error.
        fn stderr<T: Into<Stdio>>(cfg: T);
        /// Kill the child when its `Child` is dropped.
        fn kill_on_drop(kill_on_drop: bool);
        /// The child's user id.
        fn uid(id: u32);
        /// The child's group id.
        fn gid(id: u32);
        /// The child's `argv[0]`.
        fn arg0<S: AsRef<OsStr>>(arg: S);
        /// The child's process group.
        fn process_group(pgroup: i32);
    }

    /// Adds arguments.
    pub fn args<I, S>(&mut self, args: I) -> &mut Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.inner.args(args);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.inner.envs(vars);
        self
    }

    /// Runs `f` in the child before `exec`.
    ///
    /// # Safety
    ///
    /// As `std::os::unix::process::CommandExt::pre_exec`.
    pub unsafe fn pre_exec<F>(&mut self, f: F) -> &mut Command
    where
        F: FnMut() -> io::Result<()> + Send + Sync + 'static,
    {
        // SAFETY: the caller's promise is passed on.
        unsafe { self.inner.pre_exec(f) };
        self
    }

    /// std's command.
    pub fn as_std(&self) -> &std::process::Command {
        self.inner.as_std()
    }

    /// std's command, mutable.
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        self.inner.as_std_mut()
    }

    /// std's command.
    pub fn into_std(self) -> std::process::Command {
        self.inner.into_std()
    }

    /// Whether the child is killed when its `Child` is dropped.
    pub fn get_kill_on_drop(&self) -> bool {
        self.inner.get_kill_on_drop()
    }

    /// The program.
    pub fn get_program(&self) -> &OsStr {
        self.inner.get_program()
    }

    /// The arguments.
    pub fn get_args(&self) -> std::process::CommandArgs<'_> {
        self.inner.get_args()
    }

    /// The environment changes.
    pub fn get_envs(&self) -> std::process::CommandEnvs<'_> {
        self.inner.get_envs()
    }

    /// The working directory, if set.
    pub fn get_current_dir(&self) -> Option<&Path> {
        self.inner.get_current_dir()
    }

    /// Starts the child.
    ///
    /// # Panics
    ///
    /// Outside a runtime.
    #[track_caller]
    pub fn spawn(&mut self) -> io::Result<Child> {
        self.inner.spawn().map(Child::from)
    }

    /// Runs the child to its end; its exit status.
    pub fn status(&mut self) -> impl std::future::Future<Output = io::Result<ExitStatus>> + use<> {
        self.inner.status()
    }

    /// Runs the child to its end; its status and output.
    pub fn output(&mut self) -> impl std::future::Future<Output = io::Result<Output>> + use<> {
        self.inner.output()
    }
}

impl From<weft::process::Command> for Command {
    fn from(inner: weft::process::Command) -> Command {
        Command { inner }
    }
}

impl From<std::process::Command> for Command {
    fn from(std: std::process::Command) -> Command {
        weft::process::Command::from(std).into()
    }
}

/// A running child process.
#[derive(Debug)]
pub struct Child {
    /// Its standard input, if piped.
    pub stdin: Option<ChildStdin>,
    /// Its standard output, if piped.
    pub stdout: Option<ChildStdout>,
    /// Its standard error, if piped.
    pub stderr: Option<ChildStderr>,
    inner: weft::process::Child,
}

impl From<weft::process::Child> for Child {
    fn from(mut inner: weft::process::Child) -> Child {
        Child {
            stdin: inner.stdin.take().map(ChildStdin::from),
            stdout: inner.stdout.take().map(ChildStdout::from),
            stderr: inner.stderr.take().map(ChildStderr::from),
            inner,
        }
    }
}

impl Child {
    /// The OS's process id, until the child is reaped.
    pub fn id(&self) -> Option<u32> {
        self.inner.id()
    }

    /// Sends `SIGKILL` without waiting.
    pub fn start_kill(&mut self) -> io::Result<()> {
        self.inner.start_kill()
    }

    /// Kills the child and waits for it.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.stdin = None;
        self.inner.kill().await
    }

    /// Waits for the child to end (closing its standard input first, as
    /// tokio does, so a child reading it can finish).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.stdin = None;
        self.inner.wait().await
    }

    /// The exit status if the child has ended.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.inner.try_wait()
    }

    /// Waits for the child, collecting its piped output.
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        self.inner.stdin = self.stdin.take().map(|pipe| pipe.inner);
        self.inner.stdout = self.stdout.take().map(|pipe| pipe.inner);
        self.inner.stderr = self.stderr.take().map(|pipe| pipe.inner);
        self.inner.wait_with_output().await
    }
}
