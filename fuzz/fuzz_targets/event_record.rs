//! Fuzzes `checks::event_record` (see `fuzz/checks.rs`); `scripts/test` runs its corpus,
//! `fuzz/seeds/event_record/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::event_record(bytes));
