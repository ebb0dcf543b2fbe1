//! OpenTelemetry export from the C library, behind the `otlp` feature (docs/tracing.md): the
//! first runtime a process creates sets up OTLP/HTTP export of every runtime's spans and metrics
//! from the standard `OTEL_EXPORTER_OTLP_*` variables (runlet-telemetry), and each freed runtime
//! flushes what is pending. Without the feature, or with no endpoint set, nothing is exported
//! and the host's tools see no `traceparent`.

use crate::error::Error;

#[cfg(feature = "otlp")]
mod export {
    use std::sync::OnceLock;

    use runlet_telemetry::{Telemetry, TelemetryError};

    use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT};

    /// The process's export, set up by the first runtime: none when no endpoint is set or the
    /// host has its own subscriber (which sees Runlet's spans as they are), or why the
    /// variables cannot be used.
    static EXPORT: OnceLock<Result<Option<Telemetry>, String>> = OnceLock::new();

    pub(super) fn install() -> Result<(), Error> {
        let installed = EXPORT.get_or_init(|| match Telemetry::install_from_env("librunlet") {
            Ok(telemetry) => Ok(telemetry),
            Err(TelemetryError::SubscriberTaken) => Ok(None),
            Err(error) => Err(error.to_string()),
        });
        installed
            .as_ref()
            .map(|_| ())
            .map_err(|message| Error::new(RUNLET_ERR_INVALID_ARGUMENT, message.clone()))
    }

    pub(super) fn flush() {
        if let Some(Ok(Some(telemetry))) = EXPORT.get() {
            telemetry.flush();
        }
    }
}

/// Sets up export once per process; every later runtime gets the first one's answer, so
/// variables that cannot be used fail each `runlet_runtime_new` with the same message.
pub(crate) fn install() -> Result<(), Error> {
    #[cfg(feature = "otlp")]
    return export::install();
    #[cfg(not(feature = "otlp"))]
    Ok(())
}

/// Sends what the process has to export, blocking until the exporter answers or times out.
pub(crate) fn flush() {
    #[cfg(feature = "otlp")]
    export::flush();
}
