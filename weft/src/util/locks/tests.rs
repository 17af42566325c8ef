//! The guard itself: a runtime lock is counted while held (through a
//! condvar wait too) and not after, and `user_code` under one fails.

use std::time::Duration;

use super::{Condvar, Mutex, StdCondvar, StdMutex, locks_held, user_code};

#[test]
fn a_guard_is_counted_while_held_and_only_then() {
    let modelled = Mutex::new(0);
    let plain = StdMutex::new(0);
    assert_eq!(locks_held(), 0);
    {
        let _a = modelled.lock().unwrap();
        assert_eq!(locks_held(), 1);
        let _b = plain.try_lock().unwrap();
        assert_eq!(locks_held(), 2);
    }
    assert_eq!(locks_held(), 0);
    user_code("nothing held");
}

#[test]
fn a_condvar_wait_keeps_its_guard_counted() {
    let mutex = StdMutex::new(());
    let condvar = StdCondvar::new();
    let guard = mutex.lock().unwrap();
    let (guard, _) = condvar
        .wait_timeout(guard, Duration::from_millis(1))
        .unwrap();
    assert_eq!(locks_held(), 1);
    drop(guard);
    assert_eq!(locks_held(), 0);
    let mutex = Mutex::new(true);
    let condvar = Condvar::new();
    let guard = mutex.lock().unwrap();
    let (guard, _) = condvar
        .wait_timeout(guard, Duration::from_millis(1))
        .unwrap();
    assert!(*guard);
    assert_eq!(locks_held(), 1);
    drop(guard);
    assert_eq!(locks_held(), 0);
}

/// A poisoned lock's guard is a guard: counted, and uncounted on drop.
#[test]
fn a_poisoned_locks_guard_is_counted_too() {
    let mutex = std::sync::Arc::new(StdMutex::new(0));
    let poisoner = mutex.clone();
    let _ = std::thread::spawn(move || {
        let _guard = poisoner.lock().unwrap();
        panic!("poisoning the lock (util/locks.rs test)");
    })
    .join();
    let guard = mutex.lock().unwrap_err().into_inner();
    assert_eq!(locks_held(), 1);
    drop(guard);
    assert_eq!(locks_held(), 0);
}

/// The point of the guard: user code reached under a runtime lock fails
/// at once, naming what ran.
#[test]
#[should_panic(
    expected = "weft calls user code (a test's hook) while this thread holds 1 runtime lock"
)]
fn user_code_under_a_runtime_lock_fails() {
    let mutex = Mutex::new(());
    let _guard = mutex.lock().unwrap();
    user_code("a test's hook");
}

/// Runs the test `name` of this binary again in a child process with
/// `WEFT_CHILD` set, and asserts that the child aborted with `message`
/// on its stderr. (A failed check inside contained code, or inside a drop
/// async-task runs, ends the process: no `should_panic` can see it.)
pub(crate) fn expect_abort_in_child(name: &str, message: &str) {
    use std::os::unix::process::ExitStatusExt;
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("WEFT_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGABRT),
        "the child should have aborted; stderr:\n{stderr}"
    );
    assert!(
        stderr.contains(message),
        "no {message:?} in the child's stderr:\n{stderr}"
    );
}

/// Whether this is the child `expect_abort_in_child` started.
pub(crate) fn in_child() -> bool {
    std::env::var_os("WEFT_CHILD").is_some()
}

/// A failed check inside code the runtime contains (here, under a lock
/// that code took) is not contained: the process ends, saying why.
#[test]
fn a_failed_check_inside_contained_code_ends_the_process() {
    if in_child() {
        let mutex = StdMutex::new(());
        let _ = super::call_user("the test's outer code", || {
            let _guard = mutex.lock().unwrap();
            user_code("the test's inner code");
        });
        unreachable!("the failed check inside `call_user` aborts");
    }
    expect_abort_in_child(
        "util::locks::tests::a_failed_check_inside_contained_code_ends_the_process",
        "weft calls user code (the test's inner code) while this thread holds 1 runtime lock",
    );
}
