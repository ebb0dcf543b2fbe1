//! Fuzzes the analyzer: any UTF-8 input, checked against the Appendix A registry, analyzes with bounded diagnostics, and with HIR exactly when there is no error (`checks::analyze_source`, see `fuzz/checks.rs`); `scripts/test` runs its seeds,
//! `fuzz/seeds/analyze/`, with bounded mutations on stable Rust.
#![no_main]

// Each target uses one of the shared checks.
#[allow(dead_code)]
#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| checks::analyze_source(bytes));
