//! The W3C Trace Context text form (`traceparent`, `tracestate`) of an OpenTelemetry span
//! context, as entries of a map: what `CallContext::trace` hands a tool, what a host passes to
//! start a run under its own span, and what a run header keeps so that every process that
//! drives the run joins one trace.

use std::collections::BTreeMap;
use std::str::FromStr;

use opentelemetry::Context;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

pub const TRACEPARENT: &str = "traceparent";
pub const TRACESTATE: &str = "tracestate";

/// The entries of `context`: empty when it is not a valid span context.
pub fn entries(context: &SpanContext) -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    if !context.is_valid() {
        return entries;
    }
    let traceparent = format!(
        "00-{:032x}-{:016x}-{:02x}",
        context.trace_id(),
        context.span_id(),
        context.trace_flags().to_u8()
    );
    entries.insert(TRACEPARENT.to_owned(), traceparent);
    let state = context.trace_state().header();
    if !state.is_empty() {
        entries.insert(TRACESTATE.to_owned(), state);
    }
    entries
}

/// The entries of `span`'s OpenTelemetry context: empty when no OpenTelemetry layer records
/// it (a host that does not export traces).
pub fn of_span(span: &Span) -> BTreeMap<String, String> {
    if span.is_disabled() {
        return BTreeMap::new();
    }
    entries(span.context().span().span_context())
}

/// The remote span context `entries` name, when `traceparent` is a valid version-00 header
/// (https://www.w3.org/TR/trace-context/#traceparent-header); an invalid `tracestate` is
/// dropped, as the recommendation says.
pub fn parse(entries: &BTreeMap<String, String>) -> Option<SpanContext> {
    let header = entries.get(TRACEPARENT)?.trim();
    let mut parts = header.split('-');
    let (version, trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let lower_hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if parts.next().is_some()
        || version != "00"
        || !lower_hex(trace, 32)
        || !lower_hex(span, 16)
        || !lower_hex(flags, 2)
    {
        return None;
    }
    let trace_id = TraceId::from_hex(trace).ok()?;
    let span_id = SpanId::from_hex(span).ok()?;
    let flags = u8::from_str_radix(flags, 16).ok()? & TraceFlags::SAMPLED.to_u8();
    let state =
        entries.get(TRACESTATE).and_then(|state| TraceState::from_str(state).ok()).unwrap_or_default();
    let context = SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, state);
    context.is_valid().then_some(context)
}

/// Checks the entries a host gives a run to continue: `traceparent`, valid, and at most
/// `tracestate` beside it; no entries at all is fine (no parent).
pub fn check(entries: &BTreeMap<String, String>) -> Result<(), String> {
    if entries.is_empty() {
        return Ok(());
    }
    if let Some(key) = entries.keys().find(|key| *key != TRACEPARENT && *key != TRACESTATE) {
        return Err(format!("`{key}` is not a W3C trace context entry (`traceparent`, `tracestate`)"));
    }
    match (entries.get(TRACEPARENT), parse(entries)) {
        (None, _) => Err("a `tracestate` without its `traceparent`".to_owned()),
        (Some(header), None) => Err(format!(
            "`traceparent` {header:?} is not a version-00 W3C header (00-<32 hex>-<16 hex>-<2 hex>, lowercase, ids not all zeros)"
        )),
        (Some(_), Some(_)) => Ok(()),
    }
}

/// Makes the remote context `entries` name the OpenTelemetry parent of `span`, when they name
/// one; `span` keeps its `tracing` parent.
pub fn adopt(span: &Span, entries: &BTreeMap<String, String>) {
    if span.is_disabled() {
        return;
    }
    if let Some(parent) = parse(entries) {
        // Fails only when no OpenTelemetry layer records the span: there is nothing to join.
        let _ = span.set_parent(Context::new().with_remote_span_context(parent));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries_of(traceparent: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(TRACEPARENT.to_owned(), traceparent.to_owned())])
    }

    #[test]
    fn a_traceparent_reads_back_as_it_was_written() {
        let mut given = entries_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        given.insert(TRACESTATE.to_owned(), "vendor=value".to_owned());
        let context = parse(&given).expect("valid");
        assert!(context.is_remote() && context.is_sampled());
        assert_eq!(entries(&context), given);
    }

    #[test]
    fn malformed_traceparents_name_no_parent() {
        for header in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-+bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(parse(&entries_of(header)).is_none(), "{header:?}");
        }
        assert!(parse(&BTreeMap::new()).is_none());
    }

    #[test]
    fn a_host_trace_context_is_checked_entry_by_entry() {
        assert_eq!(check(&BTreeMap::new()), Ok(()));
        assert_eq!(check(&entries_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")), Ok(()));
        let error = check(&entries_of("4bf92f3577b34da6a3ce929d0e0e4736")).expect_err("not a header");
        assert!(error.contains("not a version-00 W3C header"), "{error}");
        let state = BTreeMap::from([(TRACESTATE.to_owned(), "a=b".to_owned())]);
        assert!(check(&state).expect_err("alone").contains("without its `traceparent`"));
        let mut other = entries_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        other.insert("baggage".to_owned(), "k=v".to_owned());
        assert!(check(&other).expect_err("unknown").contains("`baggage`"));
    }

    #[test]
    fn an_invalid_tracestate_is_dropped_and_the_parent_kept() {
        let mut given = entries_of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        given.insert(TRACESTATE.to_owned(), "not a list member".to_owned());
        let context = parse(&given).expect("the traceparent is valid");
        assert!(!context.is_sampled());
        assert_eq!(entries(&context).get(TRACESTATE), None);
    }
}
