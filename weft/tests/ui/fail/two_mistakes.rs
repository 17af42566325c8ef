// Both are reported at once: the missing `async` and the bad argument.
#[weft::main(worker_threads = 0)]
fn main() {}
