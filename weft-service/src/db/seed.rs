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
