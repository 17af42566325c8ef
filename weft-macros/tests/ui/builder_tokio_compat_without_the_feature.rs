// The method the attribute calls, called by hand: the same feature named.
fn main() {
    let _ = weft::runtime::Builder::new_multi_thread().tokio_compat().build();
}
