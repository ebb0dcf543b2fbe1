//! The command's OpenTelemetry: export over OTLP/HTTP when the standard `OTEL_EXPORTER_OTLP_*`
//! variables ask for it (runlet-telemetry), and the trace a new run continues, taken from the
//! `TRACEPARENT` and `TRACESTATE` variables a parent process sets (the OpenTelemetry convention
//! for environment variables as context carriers).

use std::collections::BTreeMap;

use runlet::diag::codes;
use runlet::engine::w3c;
use runlet_telemetry::Telemetry;

use crate::failure::Failure;

/// Installs export for the process when an endpoint is set; the returned guard flushes and
/// stops it when dropped, as the command returns.
pub fn install() -> Result<Option<Telemetry>, Failure> {
    Telemetry::install_from_env("runlet")
        .map_err(|error| Failure::new(codes::INVALID_ARGUMENT, error.to_string()))
}

/// The W3C trace context of `TRACEPARENT` and `TRACESTATE`, for a run's options (checked when
/// the run starts: RL8107).
pub fn parent_from_env() -> BTreeMap<String, String> {
    [("TRACEPARENT", w3c::TRACEPARENT), ("TRACESTATE", w3c::TRACESTATE)]
        .into_iter()
        .filter_map(|(variable, key)| {
            let value = std::env::var(variable).ok()?;
            (!value.is_empty()).then(|| (key.to_owned(), value))
        })
        .collect()
}
