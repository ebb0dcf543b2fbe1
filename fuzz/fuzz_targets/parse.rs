//! Fuzzes the syntax front end: any UTF-8 input parses within the configured limits, with diagnostics whose spans and fixes fit the source (`checks::parse`, see `fuzz/checks.rs`); `scripts/test` runs its seeds,
//! `fuzz/seeds/parse/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::parse(bytes));
