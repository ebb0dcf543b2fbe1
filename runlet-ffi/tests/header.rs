//! `include/runlet.h` is what the pinned cbindgen generates from this crate: the test fails on
//! drift, and `RUNLET_BLESS=1` rewrites the committed header.

use std::path::Path;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = crate_dir.join("../include/runlet.h");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    if std::env::var_os("RUNLET_BLESS").is_some() {
        std::fs::write(&header, &generated).expect("write include/runlet.h");
        return;
    }
    let committed = std::fs::read_to_string(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "include/runlet.h is out of date: run `RUNLET_BLESS=1 cargo test -p runlet-ffi --test header` and commit it"
    );
}
