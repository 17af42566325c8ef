//! loom model of the wake handshake the current-thread driver rests on
//! (`runtime/current_thread/driver.rs`): a waker publishes its work (a
//! flag, or a task pushed to the inject queue under its mutex) and then
//! unparks the slot's `Parker`; the driver looks for work and parks when
//! it finds none. The driver's code is not built under loom (it needs the
//! reactor); this model runs the real `Parker` with the driver's order of
//! steps.
//!
//! Asserted: the driver never sleeps forever with work published (loom
//! reports a deadlock if every thread is blocked), whichever of the
//! waker's two steps lands between the driver's look and its park. It
//! fails with the waker's unpark moved before its publish (the driver can
//! consume the token, look before the publish and park for good).
//!
//! Run by `scripts/loom.sh` with the other models (filter `park::`).

use crate::runtime::scheduler::park::Parker;
use crate::util::locks::Mutex;
use crate::util::loom::sync::Arc;
use crate::util::loom::sync::atomic::{AtomicBool, Ordering};

/// The driver's loop: look for work, else park (as `drive` and `park`).
fn drive_until_woken(parker: &Parker, woken: &AtomicBool) {
    loop {
        if woken.swap(false, Ordering::AcqRel) {
            return;
        }
        parker.park();
    }
}

#[test]
fn a_wake_from_another_thread_reaches_the_parking_driver() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let woken = Arc::new(AtomicBool::new(false));
        let waker = {
            let (parker, woken) = (parker.clone(), woken.clone());
            loom::thread::spawn(move || {
                // `MainWaker::wake_by_ref`: publish, then unpark. (Raised
                // with a plain `store(Release)` instead, loom reports a
                // deadlock: it lets the driver's swap, after the park
                // that consumed this unpark's token, read the older
                // `false`, though the store happens-before it through the
                // parker's mutex. The waker uses a read-modify-write, which
                // this model checks.)
                woken.swap(true, Ordering::AcqRel);
                let _ = parker.unpark();
            })
        };
        drive_until_woken(&parker, &woken);
        waker.join().unwrap();
    });
}

/// The inject queue's variant: two threads push under the queue's mutex
/// and unpark; the driver pops under it and parks when it finds nothing,
/// until it has run both.
#[test]
fn pushes_from_two_threads_reach_the_parking_driver() {
    loom::model(|| {
        let parker = Arc::new(Parker::new());
        let queue = Arc::new(Mutex::new(Vec::new()));
        let pushers: Vec<_> = (0..2)
            .map(|i| {
                let (parker, queue) = (parker.clone(), queue.clone());
                loom::thread::spawn(move || {
                    queue.lock().unwrap().push(i);
                    let _ = parker.unpark();
                })
            })
            .collect();
        let mut ran = 0;
        while ran < 2 {
            let popped = queue.lock().unwrap().pop();
            match popped {
                Some(_) => ran += 1,
                None => parker.park(),
            }
        }
        for pusher in pushers {
            pusher.join().unwrap();
        }
    });
}
