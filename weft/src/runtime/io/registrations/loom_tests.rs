//! loom model of the first registration's handshake with a keeper going to
//! sleep, through the real `Registrations` and the time driver's
//! `begin_keeping` and `keeper`.
//!
//! A keeper that has begun keeping time reads the count of registered
//! sources to choose where to sleep (`Core::sleep_as_keeper`): in the
//! reactor's poller if any is registered, else on its condvar, which
//! readiness cannot reach. A source registered meanwhile, the first one,
//! makes its registrar look at the keeper word and poke the keeper found
//! there (`PollEvented::with_runtime`, `Shared::poke_keeper`). The
//! invariant: the keeper sleeps in the poller, or it is poked; else the new
//! socket's readiness would wait for the keeper's next timer.
//!
//! Fails with either fence of the handshake removed (the one in
//! `Registrations::add`, the one in `begin_keeping`): loom finds the
//! interleaving where the keeper reads the old count and the registrar the
//! old keeper word.

use loom::sync::Arc;
use loom::thread;

use super::Registrations;
use crate::runtime::time::driver::Driver;

#[test]
fn a_first_registration_as_the_keeper_goes_to_sleep_reaches_it() {
    loom::model(|| {
        let time = Arc::new(Driver::new(1));
        let registrations = Arc::new(Registrations::new());
        let registrar = {
            let (time, registrations) = (time.clone(), registrations.clone());
            thread::spawn(move || {
                // Whether the registrar pokes worker 0, the keeper.
                registrations.add() && time.keeper() == Some(0)
            })
        };
        time.begin_keeping(0).expect("nobody else keeps time");
        let sleeps_in_poller = registrations.count() > 0;
        let poked = registrar.join().unwrap();
        assert!(
            sleeps_in_poller || poked,
            "the keeper sleeps on its condvar and the first registration does not poke it"
        );
    });
}

/// The count has many writers in production: any thread registers or
/// deregisters a source. Here one thread deregisters the last source while
/// another registers a new one, and a worker goes to sleep as the keeper.
/// Whichever comes first, the count must end at 1 (a lost update would
/// leave it 0 with a socket registered, and a keeper sleeping on its
/// condvar where readiness cannot reach it), and the keeper must sleep in
/// the poller or be poked by the registrar that took the count from 0.
///
/// Fails with `add`'s `fetch_add` split into a load and a store, and with
/// `remove`'s `fetch_sub` split so (the other writer's update is lost);
/// with either fence removed, as the model above.
#[test]
fn a_registration_racing_the_last_deregistration_reaches_the_keeper() {
    loom::model(|| {
        let time = Arc::new(Driver::new(1));
        let registrations = Arc::new(Registrations::new());
        assert!(registrations.add(), "the first source");
        let deregistrar = {
            let registrations = registrations.clone();
            thread::spawn(move || registrations.remove())
        };
        let registrar = {
            let (time, registrations) = (time.clone(), registrations.clone());
            thread::spawn(move || registrations.add() && time.keeper() == Some(0))
        };
        time.begin_keeping(0).expect("nobody else keeps time");
        let sleeps_in_poller = registrations.count() > 0;
        let poked = registrar.join().unwrap();
        deregistrar.join().unwrap();
        assert!(
            sleeps_in_poller || poked,
            "the keeper sleeps on its condvar and the new registration does not poke it"
        );
        assert_eq!(registrations.count(), 1, "one source is registered");
    });
}
