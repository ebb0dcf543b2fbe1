//! Embeds the diagnostics catalogue (`docs/diagnostics/RL*.md`) into the library, so that
//! `runlet explain` works offline and a code without an entry fails the catalogue test.

use std::{env, fs, path::PathBuf};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("../docs/diagnostics");
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, PathBuf)> = fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter_map(|p| {
                    let stem = p.file_stem()?.to_str()?.to_owned();
                    let is_entry = stem.starts_with("RL") && p.extension()? == "md";
                    is_entry.then_some((stem, p))
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let mut out = String::from("pub(super) static ENTRIES: &[(&str, &str)] = &[\n");
    for (code, path) in &entries {
        println!("cargo::rerun-if-changed={}", path.display());
        let path = path.canonicalize().expect("catalogue entry path");
        out.push_str(&format!("    ({code:?}, include_str!({:?})),\n", path.display().to_string()));
    }
    out.push_str("];\n");
    let target = PathBuf::from(env::var("OUT_DIR").expect("set by cargo")).join("catalogue.rs");
    fs::write(target, out).expect("write catalogue.rs");
}
