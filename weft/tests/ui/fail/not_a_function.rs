#[weft::main]
struct Server;

fn main() {}
