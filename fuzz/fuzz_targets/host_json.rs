//! Fuzzes the strict host JSON reader: what it reads prints as presentation JSON that reads back (`checks::host_json`, see `fuzz/checks.rs`); `scripts/test` runs its seeds,
//! `fuzz/seeds/host_json/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::host_json(bytes));
