//! The rows both databases start with.

/// Rows in `users` after seeding, ids 1 to `USERS`.
pub const USERS: i64 = 10_000;

/// TechEmpower's fortunes, ids 1 to 12 (its specification's exact text).
pub const FORTUNES: [&str; 12] = [
    "fortune: No such file or directory",
    "A computer scientist is someone who fixes things that aren't broken.",
    "After enough decimal places, nobody gives a damn.",
    "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    "A computer program does what you tell it to do, not what you want it to do.",
    "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    "Any program that runs right is obsolete.",
    "A list is only as strong as its weakest link. — Donald Knuth",
    "Feature: A bug with seniority.",
    "Computers make very fast, very accurate mistakes.",
    "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    "フレームワークのベンチマーク",
];

const FIRST: [&str; 10] = [
    "Ada", "Alan", "Barbara", "Dennis", "Donald", "Edsger", "Grace", "John", "Ken", "Margaret",
];
const LAST: [&str; 10] = [
    "Backus", "Dijkstra", "Hamilton", "Hopper", "Knuth", "Liskov", "Lovelace", "Ritchie",
    "Thompson", "Turing",
];

/// The seeded user with id `id` (1 to `USERS`).
pub fn user(id: i64) -> (String, String) {
    let i = id as usize;
    let name = format!("{} {}", FIRST[i % 10], LAST[(i / 10) % 10]);
    (name, format!("user{id}@example.com"))
}

/// Rows in TechEmpower's `World` table, ids 1 to `WORLDS`; each row's
/// `randomNumber` is from 1 to `WORLDS` too.
pub const WORLDS: i32 = 10_000;

/// A random `randomNumber` (1 to `WORLDS`).
pub fn random_number() -> i32 {
    fastrand::i32(1..=WORLDS)
}

/// A random `randomNumber` other than `old` (so that an update always
/// changes the row), uniform over the others.
pub fn new_random_number(old: i32) -> i32 {
    let pick = fastrand::i32(1..WORLDS);
    if pick >= old { pick + 1 } else { pick }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_random_number_differs_and_stays_in_range() {
        for old in [1, 2, 5_000, WORLDS - 1, WORLDS] {
            for _ in 0..2_000 {
                let new = new_random_number(old);
                assert_ne!(new, old);
                assert!((1..=WORLDS).contains(&new), "{new}");
            }
        }
        let seen: std::collections::HashSet<i32> = (0..50_000).map(|_| random_number()).collect();
        assert!(seen.iter().all(|n| (1..=WORLDS).contains(n)));
        // 50,000 draws from 10,000 numbers leave about 67 unseen.
        assert!(seen.len() > 9_800, "{} distinct", seen.len());
    }
}
