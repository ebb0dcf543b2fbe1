//! Gives the shared library a SONAME carrying the full version (no ABI stability before 1.0),
//! and points crates that link `runlet` at the committed header (`DEP_RUNLET_INCLUDE`).

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librunlet.so.{version}");
    }
    let include = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include");
    println!("cargo:include={}", include.display());
    println!("cargo:rerun-if-changed=build.rs");
}
