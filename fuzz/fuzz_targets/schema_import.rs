//! Fuzzes JSON Schema import: any schema is imported or refused, deterministically, and values validate against what is imported (`checks::schema_import`, see `fuzz/checks.rs`); `scripts/test` runs its seeds,
//! `fuzz/seeds/schema_import/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::schema_import(bytes));
