// A body that does not match the declared return type: rustc's own error,
// pointing at the user's expression (not at the attribute).
#[weft::main]
async fn main() -> Result<(), String> {
    if std::env::args().count() > 3 {
        return Err("too many arguments".to_owned());
    }
    "done".to_owned()
}
