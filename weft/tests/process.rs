//! `weft::process`: spawning (`echo`, `cat`, `sh -c`), exit codes and
//! signals, `output` and `status`, pipes in both directions through
//! futures-io's and tokio's traits, `kill`, `try_wait`, `kill_on_drop`,
//! the reaping of dropped children (also after their runtime is gone), many
//! children at once, `NotFound`, and the builder's settings reaching the
//! child.

use std::future::Future;
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_lite::io::{AsyncReadExt, AsyncWriteExt};
use weft::process::{Child, Command};
use weft::runtime::{Builder, Runtime};

/// Far longer than any step here takes; only a broken reaper reaches it.
const PATIENCE: Duration = Duration::from_secs(20);

fn runtime() -> Runtime {
    Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime builds")
}

/// Runs `future` on a fresh runtime, failing the test if it takes longer
/// than `PATIENCE`.
fn run<F: Future>(future: F) -> F::Output {
    runtime().block_on(async {
        weft::time::timeout(PATIENCE, future)
            .await
            .expect("the test's body finishes in time")
    })
}

/// The state letter of process `pid` in `/proc` (`R`, `S`, `Z`...), or
/// `None` once it has been reaped.
fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) S ...`: the state follows the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// The process group of `pid`, from `/proc`.
fn proc_pgrp(pid: u32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    // Fields after `comm`: state, ppid, pgrp.
    after.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// Waits until `pid` is gone from `/proc` (reaped), failing if it is still
/// there (a zombie, or running) after `PATIENCE`.
fn assert_reaped(pid: u32) {
    let deadline = Instant::now() + PATIENCE;
    while let Some(state) = proc_state(pid) {
        assert!(
            Instant::now() < deadline,
            "pid {pid} is still there in state {state} (Z: a zombie nobody reaped)"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    command
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// `output` gives the status and what the child wrote to stdout and to
/// stderr, each in its own vector.
#[test]
fn output_captures_stdout_stderr_and_the_status() {
    run(async {
        let out = Command::new("echo").arg("hello").output().await.unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello\n");
        assert!(out.stderr.is_empty());

        let out = sh("echo out; echo err >&2; exit 7").output().await.unwrap();
        assert_eq!(out.status.code(), Some(7));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    });
}

/// `output` pipes stdout and stderr even when they were set otherwise
/// (tokio's rule, not `std`'s).
#[test]
fn output_pipes_stdout_whatever_it_was_set_to() {
    run(async {
        let out = sh("echo captured; echo also >&2")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"captured\n");
        assert_eq!(out.stderr, b"also\n");
    });
}

/// Exit codes and killing signals come through `wait`, `status` and
/// `output` as `std` reports them.
#[test]
fn exit_codes_and_signals_come_through() {
    run(async {
        for code in [0, 1, 3, 255] {
            let status = sh(&format!("exit {code}")).status().await.unwrap();
            assert_eq!(status.code(), Some(code));
        }
        let status = sh("kill -TERM $$").status().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        let mut child = Command::new("false").spawn().unwrap();
        assert_eq!(child.wait().await.unwrap().code(), Some(1));
    });
}

/// `status` closes the pipes it was asked for at once: `cat` with a piped
/// stdin reads its end and exits, instead of waiting forever.
#[test]
fn status_closes_piped_handles() {
    run(async {
        let status = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .status()
            .await
            .unwrap();
        assert!(status.success());
    });
}

/// 1 MiB through `cat` and back, written and read at the same time by two
/// tasks (far more than a pipe holds, so both directions wait for
/// readiness many times), arrives byte for byte.
#[test]
fn piped_stdin_to_stdout_round_trip() {
    run(async {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let data = pattern(1 << 20);
        let mut stdin = cat.stdin.take().unwrap();
        let expected = data.clone();
        let writer = weft::spawn(async move {
            stdin.write_all(&data).await.unwrap();
            // Dropped: cat sees the end of its input.
        });
        let mut echoed = Vec::new();
        let mut stdout = cat.stdout.take().unwrap();
        stdout.read_to_end(&mut echoed).await.unwrap();
        writer.await.unwrap();
        assert!(echoed == expected, "cat gave back different bytes");
        assert!(cat.wait().await.unwrap().success());
    });
}

/// The pipes also implement tokio's `AsyncRead`/`AsyncWrite` (feature
/// `tokio-io`), and `wait_with_output` collects what is left.
#[test]
fn pipes_work_through_tokios_traits() {
    use tokio::io::{AsyncReadExt as TokioRead, AsyncWriteExt as TokioWrite};
    run(async {
        let mut child = sh("read line; echo \"got $line\"; echo done >&2")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        TokioWrite::write_all(&mut stdin, b"ping\n").await.unwrap();
        TokioWrite::flush(&mut stdin).await.unwrap();
        TokioWrite::shutdown(&mut stdin).await.unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut line = [0; 9];
        TokioRead::read_exact(&mut stdout, &mut line).await.unwrap();
        assert_eq!(&line, b"got ping\n");
        child.stdout = Some(stdout);
        let out = child.wait_with_output().await.unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty());
        assert_eq!(out.stderr, b"done\n");
    });
}

/// `wait` closes the child's stdin first, so a child reading it to its end
/// finishes (tokio's behaviour), and the handle is gone afterwards.
#[test]
fn wait_closes_stdin_first() {
    run(async {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        assert!(cat.wait().await.unwrap().success());
        assert!(cat.stdin.is_none());
    });
}

/// `try_wait` says `None` while the child runs and does not close stdin;
/// once it has exited it reaps it and says the status, again and again;
/// `id` is `None` from then on, and `wait` gives the same status.
#[test]
fn try_wait_before_and_after_the_exit() {
    run(async {
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let pid = cat.id().expect("running");
        assert_eq!(cat.try_wait().unwrap(), None);
        assert!(cat.stdin.is_some(), "try_wait leaves stdin open");
        assert_eq!(
            proc_state(pid).map(|s| s == 'Z'),
            Some(false),
            "cat still runs"
        );
        drop(cat.stdin.take());
        let status = loop {
            if let Some(status) = cat.try_wait().unwrap() {
                break status;
            }
            weft::time::sleep(Duration::from_millis(5)).await;
        };
        assert!(status.success());
        assert_eq!(cat.try_wait().unwrap(), Some(status));
        assert_eq!(cat.id(), None);
        assert_eq!(cat.wait().await.unwrap(), status);
        assert_eq!(proc_state(pid), None, "try_wait reaped it");
    });
}

/// `kill` sends `SIGKILL` and waits: the child is reaped when it returns.
/// Killing an exited child again is `Ok` and sends nothing (tokio's).
#[test]
fn kill_ends_and_reaps_the_child() {
    run(async {
        let mut child = Command::new("sleep").arg("100").spawn().unwrap();
        let pid = child.id().unwrap();
        child.kill().await.unwrap();
        assert_eq!(proc_state(pid), None, "reaped by kill");
        let status = child.try_wait().unwrap().expect("exited");
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        child.start_kill().unwrap();
        child.kill().await.unwrap();
    });
}

/// `start_kill` returns at once; the exit then comes through `wait`.
#[test]
fn start_kill_then_wait() {
    run(async {
        let mut child = Command::new("sleep").arg("100").spawn().unwrap();
        child.start_kill().unwrap();
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    });
}

/// A child dropped with `kill_on_drop(true)` is killed and reaped: its pid
/// leaves `/proc` (a `sleep 100` would otherwise stay 100 s).
#[test]
fn kill_on_drop_kills_and_reaps() {
    let pid = run(async {
        let mut command = Command::new("sleep");
        command.arg("100").kill_on_drop(true);
        assert!(command.get_kill_on_drop());
        let child = command.spawn().unwrap();
        child.id().unwrap()
        // Dropped here, inside the runtime.
    });
    assert_reaped(pid);
}

/// The future of `status` dropped early drops its child, so
/// `kill_on_drop` applies to it too.
#[test]
fn a_dropped_status_future_kills_with_kill_on_drop() {
    let rt = runtime();
    let _guard = rt.enter();
    // Spawned when called; a marker file tells the child's pid.
    let dir = std::env::temp_dir().join(format!("weft-process-status-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pid_file = dir.join("pid");
    let status = sh(&format!("echo $$ > {}; exec sleep 100", pid_file.display()))
        .kill_on_drop(true)
        .status();
    let deadline = Instant::now() + PATIENCE;
    let pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the child never wrote its pid");
        std::thread::sleep(Duration::from_millis(5));
    };
    drop(status);
    assert_reaped(pid);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A child dropped without `kill_on_drop` keeps running (as with `std`),
/// and is reaped when it exits: no zombie is left.
#[test]
fn a_dropped_child_keeps_running_and_is_reaped() {
    let rt = runtime();
    let pid = rt.block_on(async {
        let child = Command::new("sleep").arg("1").spawn().unwrap();
        child.id().unwrap()
    });
    let state = proc_state(pid).expect("still there right after the drop");
    assert_ne!(state, 'Z', "still running, not exited");
    assert_reaped(pid);
    drop(rt);
}

/// A child dropped inside a runtime that then shuts down before the child
/// exits is still reaped (by the process-wide `weft-reaper` thread).
#[test]
fn a_dropped_child_is_reaped_after_its_runtime_is_gone() {
    let rt = runtime();
    let pid = rt.block_on(async {
        let child = Command::new("sleep").arg("1").spawn().unwrap();
        child.id().unwrap()
    });
    drop(rt);
    assert!(proc_state(pid).is_some(), "sleep 1 still runs");
    assert_reaped(pid);
}

/// A child spawned on a runtime that has since shut down is waited for on
/// another (as on tokio): its exit is watched from the runtime it is
/// awaited on. Fails with the first runtime's `is_rt_shutdown_err` if the
/// exit event stays tied to it.
#[test]
fn a_child_is_awaited_on_another_runtime_after_its_own_is_gone() {
    let mut child: Child = runtime().block_on(async { sh("sleep 0.1; exit 3").spawn().unwrap() });
    let status = run(async { child.wait().await }).expect("the wait succeeds");
    assert_eq!(status.code(), Some(3));
}

/// A child dropped outside any runtime (after `block_on` returned) is
/// reaped too: the orphan task goes to the runtime it was spawned on.
#[test]
fn a_child_dropped_outside_the_runtime_is_reaped() {
    let rt = runtime();
    let child: Child = rt.block_on(async { Command::new("sleep").arg("0.1").spawn().unwrap() });
    let pid = child.id().unwrap();
    drop(child);
    assert_reaped(pid);
    drop(rt);
}

/// Fifty children at once, each waited for by its own task, give their
/// own exit codes; fifty more dropped at once all leave `/proc`.
#[test]
fn many_children_at_once_are_reaped() {
    let rt = runtime();
    let dropped = rt.block_on(async {
        let waits: Vec<_> = (0..50)
            .map(|i| {
                let mut child = sh(&format!("sleep 0.0{}; exit {i}", i % 10))
                    .spawn()
                    .unwrap();
                weft::spawn(async move { child.wait().await.unwrap().code() })
            })
            .collect();
        for (i, wait) in waits.into_iter().enumerate() {
            assert_eq!(wait.await.unwrap(), Some(i as i32));
        }
        (0..50)
            .map(|i| {
                let child = sh(&format!("sleep 0.0{}", i % 10)).spawn().unwrap();
                child.id().unwrap()
            })
            .collect::<Vec<_>>()
    });
    for pid in dropped {
        assert_reaped(pid);
    }
    drop(rt);
}

/// A program that does not exist is `NotFound` from `spawn`, `status` and
/// `output`, as `std` reports it.
#[test]
fn a_missing_program_is_not_found() {
    run(async {
        let missing = "weft-test-no-such-program";
        let error = Command::new(missing).spawn().unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
        let error = Command::new(missing).status().await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
        let error = Command::new(missing).output().await.unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    });
}

/// `process_group(0)` puts the child in a new group named by its pid (so
/// a signal to the group reaches it); by default it shares ours.
#[test]
fn process_group_puts_the_child_in_its_own_group() {
    run(async {
        let mut grouped = Command::new("sleep")
            .arg("100")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = grouped.id().unwrap();
        assert_eq!(proc_pgrp(pid), pid as i32);
        // SAFETY: `kill` reads no memory; `-pid` names the group just made,
        // whose only member is the child (not yet reaped).
        assert_eq!(unsafe { libc::kill(-(pid as i32), libc::SIGKILL) }, 0);
        assert_eq!(grouped.wait().await.unwrap().signal(), Some(libc::SIGKILL));

        let mut plain = Command::new("sleep").arg("100").spawn().unwrap();
        // SAFETY: `getpgrp` reads no memory.
        let ours = unsafe { libc::getpgrp() };
        assert_eq!(proc_pgrp(plain.id().unwrap()), ours);
        plain.kill().await.unwrap();
    });
}

/// The environment, working directory and `argv[0]` set on the command
/// reach the child; the getters say what was set.
#[test]
fn the_builders_settings_reach_the_child() {
    run(async {
        let mut command = sh("echo \"$GREETING\"; echo \"${HOME:-no home}\"; pwd");
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap())
            .envs([("GREETING", "hi"), ("DROPPED", "x")])
            .env_remove("DROPPED")
            .current_dir("/");
        assert_eq!(command.get_program(), "sh");
        assert_eq!(command.get_args().collect::<Vec<_>>().len(), 2);
        assert_eq!(command.get_current_dir(), Some(std::path::Path::new("/")));
        let envs: Vec<_> = command.get_envs().collect();
        assert!(envs.contains(&("GREETING".as_ref(), Some("hi".as_ref()))));
        // After `env_clear`, a removed variable is simply not set.
        assert!(envs.iter().all(|(key, _)| *key != "DROPPED"));
        let out = command.output().await.unwrap();
        assert_eq!(out.stdout, b"hi\nno home\n/\n");

        let out = Command::new("cat")
            .arg("/proc/self/cmdline")
            .arg0("renamed")
            .output()
            .await
            .unwrap();
        assert!(out.stdout.starts_with(b"renamed\0"), "{:?}", out.stdout);

        // SAFETY: `getuid`/`getgid` read no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let status = Command::new("true")
            .uid(uid)
            .gid(gid)
            .status()
            .await
            .unwrap();
        assert!(status.success());

        let from_std = Command::from(std::process::Command::new("true"));
        assert!(!from_std.get_kill_on_drop());
        assert_eq!(from_std.as_std().get_program(), "true");
    });
}

/// `pre_exec` runs in the child before `exec`: its error is `spawn`'s.
#[test]
fn pre_exec_runs_before_exec() {
    run(async {
        let mut command = Command::new("true");
        // SAFETY: the closure only builds an `io::Error` from a number (no
        // allocation, no lock): async-signal-safe.
        unsafe {
            command.pre_exec(|| Err(std::io::Error::from_raw_os_error(libc::EPERM)));
        }
        let error = command.spawn().unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EPERM), "{error}");
    });
}

/// A child's stdout handed to another child (`TryFrom<ChildStdout> for
/// Stdio`) is given back blocking, and the pipeline works.
#[test]
fn a_pipe_end_goes_to_another_child_in_blocking_mode() {
    run(async {
        let mut echo = Command::new("echo")
            .arg("hello world")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = echo.stdout.take().unwrap();
        // SAFETY: `F_GETFL` reads no memory; the descriptor is open.
        let flags = unsafe { libc::fcntl(stdout.as_raw_fd(), libc::F_GETFL) };
        assert_ne!(flags & libc::O_NONBLOCK, 0, "on the reactor: non-blocking");
        let fd = stdout.into_owned_fd().unwrap();
        // SAFETY: as above.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0, "given back blocking");
        let stdout =
            weft::process::ChildStdout::from_std(std::process::ChildStdout::from(fd)).unwrap();
        let stdio: Stdio = stdout.try_into().unwrap();
        let out = Command::new("tr")
            .args(["a-z", "A-Z"])
            .stdin(stdio)
            .output()
            .await
            .unwrap();
        assert_eq!(out.stdout, b"HELLO WORLD\n");
        assert!(echo.wait().await.unwrap().success());
    });
}

/// `spawn` outside a runtime panics, saying where to call it from.
#[test]
#[should_panic(expected = "called outside of a weft runtime")]
fn spawn_outside_a_runtime_panics() {
    let _ = Command::new("true").spawn();
}

/// A `Child` kept past its runtime's shutdown and awaited outside any
/// runtime fails with the runtime's shutdown error instead of hanging (no
/// reactor can watch it), and the child is still reaped once dropped.
#[test]
fn a_child_outliving_its_runtime_fails_to_wait_outside_a_runtime_but_is_reaped() {
    let first = runtime();
    let mut child = first.block_on(async { Command::new("sleep").arg("0.2").spawn().unwrap() });
    let pid = child.id().unwrap();
    drop(first);
    let waited = futures_lite::future::block_on(child.wait());
    assert!(
        waited
            .as_ref()
            .is_err_and(weft::runtime::is_rt_shutdown_err),
        "{waited:?}"
    );
    drop(child);
    assert_reaped(pid);
}
