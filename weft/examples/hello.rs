//! Spawn from outside and from inside a runtime, and join everything.
//!
//! `cargo run -p weft --example hello`

use weft::runtime::Builder;

fn main() -> std::io::Result<()> {
    let rt = Builder::new_multi_thread().worker_threads(4).build()?;

    // From outside the runtime: through the runtime (or a Handle).
    let outside: Vec<_> = (0..100u64).map(|i| rt.spawn(async move { i })).collect();

    let total = rt.block_on(async move {
        // From inside: weft::spawn.
        let inside: Vec<_> = (0..100u64)
            .map(|i| weft::spawn(async move { i * 2 }))
            .collect();
        let mut total = 0;
        for handle in outside.into_iter().chain(inside) {
            total += handle.await.expect("task failed");
        }
        total
    });
    println!("total = {total}");
    assert_eq!(total, 4950 * 3);
    Ok(())
}
