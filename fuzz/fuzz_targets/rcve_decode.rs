//! Fuzzes the RCVE v1 decoder: whatever it accepts is canonical (`checks::rcve_decode`, see `fuzz/checks.rs`); `scripts/test` runs its seeds,
//! `fuzz/seeds/rcve_decode/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::rcve_decode(bytes));
