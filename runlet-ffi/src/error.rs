//! The error object of the ABI: fallible functions return `runlet_error *` (NULL is success)
//! carrying a `runlet_code`, a borrowed message and optional details JSON; hosts build their own
//! with `runlet_error_new` and `runlet_error_new_tool` to fail tool calls or journal calls.

use runlet::analyze::InputsError;
use runlet::engine::{LimitParseError, ToolError};
use runlet::value::{Object, Value, parse_json};

use crate::strings::runlet_str;

/// An error code. New codes may appear in later versions; treat unknown ones as
/// `RUNLET_ERR_INTERNAL`.
pub type runlet_code = u32;

/// Success; no error object carries it.
pub const RUNLET_OK: runlet_code = 0;
/// An argument has a value the function does not accept, or a blocking function was called
/// from inside a Runlet callback.
pub const RUNLET_ERR_INVALID_ARGUMENT: runlet_code = 1;
/// A required pointer is NULL.
pub const RUNLET_ERR_NULL_ARGUMENT: runlet_code = 2;
/// A string argument is not valid UTF-8.
pub const RUNLET_ERR_INVALID_UTF8: runlet_code = 3;
/// A JSON argument does not parse or has the wrong shape; details give line and column.
pub const RUNLET_ERR_INVALID_JSON: runlet_code = 4;
/// The program does not compile; details are the diagnostics report (INTERFACES.md §1).
pub const RUNLET_ERR_COMPILE: runlet_code = 5;
/// The run failed with an error raised by the program itself; details are the error record.
pub const RUNLET_ERR_SCRIPT: runlet_code = 6;
/// The run failed because a tool failed; details are the error record with the tool's code.
pub const RUNLET_ERR_TOOL_FAILED: runlet_code = 7;
/// A journal failed (storage); the run stopped.
pub const RUNLET_ERR_JOURNAL: runlet_code = 8;
/// The run or call was cancelled.
pub const RUNLET_ERR_CANCELLED: runlet_code = 9;
/// A wait ended before the awaited thing happened.
pub const RUNLET_ERR_TIMEOUT: runlet_code = 10;
/// The thing to complete was already completed.
pub const RUNLET_ERR_ALREADY_COMPLETED: runlet_code = 11;
/// A struct's `struct_size` or a vtable's `abi_major`/`flags` is not one this library knows.
pub const RUNLET_ERR_VERSION_MISMATCH: runlet_code = 12;
/// Runlet panicked. In a call, the handle involved is poisoned and refuses further calls; as
/// `runlet_run_result`, the run's own task panicked (RL7307): the run stopped as of its last
/// commit and can be resumed, and its handle is not poisoned.
pub const RUNLET_ERR_PANIC: runlet_code = 13;
/// An internal failure (a bug in Runlet).
pub const RUNLET_ERR_INTERNAL: runlet_code = 14;
/// The run has not finished yet.
pub const RUNLET_ERR_NOT_FINISHED: runlet_code = 15;
/// What was asked for has no form at the boundary (a run result holding bytes, which JSON cannot
/// carry).
pub const RUNLET_ERR_UNSUPPORTED: runlet_code = 16;
/// The registry JSON is invalid; details are the diagnostics report about the registry text.
pub const RUNLET_ERR_REGISTRY: runlet_code = 17;
/// Journal callbacks: a run with this id already exists.
pub const RUNLET_ERR_JOURNAL_RUN_EXISTS: runlet_code = 18;
/// Journal callbacks: the run id is unknown to the journal.
pub const RUNLET_ERR_JOURNAL_UNKNOWN_RUN: runlet_code = 19;
/// Journal callbacks: `expected_seq` is not the journal's last sequence number (set
/// `*last_seq_out` to the actual one).
pub const RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT: runlet_code = 20;
/// Journal callbacks: records with a gap, or a snapshot beyond the stored records.
pub const RUNLET_ERR_JOURNAL_INVALID_RECORD: runlet_code = 21;
/// The run crossed an execution limit; details are the error record naming the limit.
pub const RUNLET_ERR_LIMIT: runlet_code = 22;
/// MCP servers of `runlet_runtime_options.mcp_servers_json` could not be attached: a malformed
/// configuration, a server that did not start or answer, tools that do not import; the details'
/// `code` is the `RL86xx` code.
pub const RUNLET_ERR_MCP: runlet_code = 23;

/// The stable name of a code, as tool errors built from a plain code carry it.
fn code_name(code: runlet_code) -> &'static str {
    match code {
        RUNLET_ERR_INVALID_ARGUMENT => "INVALID_ARGUMENT",
        RUNLET_ERR_NULL_ARGUMENT => "NULL_ARGUMENT",
        RUNLET_ERR_INVALID_UTF8 => "INVALID_UTF8",
        RUNLET_ERR_INVALID_JSON => "INVALID_JSON",
        RUNLET_ERR_COMPILE => "COMPILE",
        RUNLET_ERR_SCRIPT => "SCRIPT",
        RUNLET_ERR_TOOL_FAILED => "TOOL_FAILED",
        RUNLET_ERR_JOURNAL => "JOURNAL",
        RUNLET_ERR_CANCELLED => "CANCELLED",
        RUNLET_ERR_TIMEOUT => "TIMEOUT",
        RUNLET_ERR_ALREADY_COMPLETED => "ALREADY_COMPLETED",
        RUNLET_ERR_VERSION_MISMATCH => "VERSION_MISMATCH",
        RUNLET_ERR_PANIC => "PANIC",
        RUNLET_ERR_NOT_FINISHED => "NOT_FINISHED",
        RUNLET_ERR_UNSUPPORTED => "UNSUPPORTED",
        RUNLET_ERR_REGISTRY => "REGISTRY",
        RUNLET_ERR_JOURNAL_RUN_EXISTS => "JOURNAL_RUN_EXISTS",
        RUNLET_ERR_JOURNAL_UNKNOWN_RUN => "JOURNAL_UNKNOWN_RUN",
        RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT => "JOURNAL_SEQUENCE_CONFLICT",
        RUNLET_ERR_JOURNAL_INVALID_RECORD => "JOURNAL_INVALID_RECORD",
        RUNLET_ERR_LIMIT => "LIMIT",
        RUNLET_ERR_MCP => "MCP",
        _ => "INTERNAL",
    }
}

/// An error: code, message, optional details JSON, and, for errors that fail a tool call, the
/// tool's own stable code, retry hints and details. Immutable once returned; `Send + Sync`.
#[derive(Debug, Clone, PartialEq)]
pub struct runlet_error {
    code: runlet_code,
    message: String,
    details_json: String,
    tool: ToolFailure,
}

/// What a failed tool call reports besides code and message.
#[derive(Debug, Clone, Default, PartialEq)]
struct ToolFailure {
    tool_code: Option<String>,
    retryable: bool,
    retry_after_ms: Option<u64>,
    details: Option<Object>,
}

/// The Rust name of `runlet_error`.
pub(crate) type Error = runlet_error;

impl runlet_error {
    pub(crate) fn new(code: runlet_code, message: impl Into<String>) -> Error {
        runlet_error {
            code,
            message: message.into(),
            details_json: String::new(),
            tool: ToolFailure::default(),
        }
    }

    pub(crate) fn with_details_json(mut self, details_json: String) -> Error {
        self.details_json = details_json;
        self
    }

    pub(crate) fn code(&self) -> runlet_code {
        self.code
    }

    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn details_json(&self) -> &str {
        &self.details_json
    }

    /// Hands the error to the host.
    pub(crate) fn into_raw(self) -> *mut runlet_error {
        Box::into_raw(Box::new(self))
    }

    /// Takes back an error a host callback returned (ownership passes to Runlet).
    ///
    /// # Safety
    /// `raw` is NULL or an error from `runlet_error_new*`/a Runlet function, not yet freed.
    pub(crate) unsafe fn from_raw(raw: *mut runlet_error) -> Option<Error> {
        // SAFETY: forwarded from the caller.
        (!raw.is_null()).then(|| *unsafe { Box::from_raw(raw) })
    }

    /// The tool error a call fails with when the host fails it with this error.
    pub(crate) fn to_tool_error(&self, tool: &str) -> ToolError {
        if self.code == RUNLET_ERR_CANCELLED && self.tool.tool_code.is_none() {
            return ToolError::cancelled(tool);
        }
        let code = self.tool.tool_code.clone().unwrap_or_else(|| code_name(self.code).to_owned());
        let mut error = ToolError::new(code, self.message.clone());
        error.retryable = self.tool.retryable;
        error.retry_after = self.tool.retry_after_ms.map(std::time::Duration::from_millis);
        if let Some(details) = &self.tool.details {
            error.details = details.clone();
        }
        error
    }
}

/// Core's refusal of limits given as JSON: malformed JSON or not an object is `INVALID_JSON`,
/// a key that is no limit or a cap that is no whole number `INVALID_ARGUMENT`.
pub(crate) fn limits_error(what: &str, error: LimitParseError) -> Error {
    match error {
        LimitParseError::NotJson(error) => invalid_json(what, &error),
        LimitParseError::NotAnObject => Error::new(RUNLET_ERR_INVALID_JSON, format!("`{what}`: {error}")),
        other => Error::new(RUNLET_ERR_INVALID_ARGUMENT, format!("`{what}`: {other}")),
    }
}

/// Core's refusal of host inputs given as JSON: malformed JSON or not an object is
/// `INVALID_JSON`, an unusable name or a value its declared schema refuses `INVALID_ARGUMENT`.
pub(crate) fn inputs_error(what: &str, error: InputsError) -> Error {
    match error {
        InputsError::NotJson(error) => invalid_json(what, &error),
        InputsError::NotAnObject => Error::new(RUNLET_ERR_INVALID_JSON, format!("`{what}`: {error}")),
        other => Error::new(RUNLET_ERR_INVALID_ARGUMENT, format!("`{what}`: {other} ({})", other.code())),
    }
}

/// The error for malformed JSON, with where it went wrong in the details.
pub(crate) fn invalid_json(what: &str, error: &runlet::value::JsonError) -> Error {
    Error::new(RUNLET_ERR_INVALID_JSON, format!("`{what}`: {error}")).with_details_json(format!(
        r#"{{"line":{},"column":{},"offset":{}}}"#,
        error.line, error.column, error.offset
    ))
}

/// The code of `err`; `RUNLET_OK` for NULL.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_code(err: *const runlet_error) -> runlet_code {
    ffi_boundary!(runlet_code, {
        // SAFETY: the caller passes NULL or a live error.
        unsafe { err.as_ref() }.map_or(RUNLET_OK, runlet_error::code)
    })
}

/// The message of `err` (empty for NULL). Borrowed: valid until `runlet_error_free(err)`.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_message(err: *const runlet_error) -> runlet_str {
    ffi_boundary!(runlet_str, {
        // SAFETY: the caller passes NULL or a live error.
        unsafe { err.as_ref() }.map_or_else(runlet_str::empty, |err| runlet_str::of(err.message()))
    })
}

/// The details of `err` as a JSON object, or an empty string when it has none. Compile errors
/// carry the diagnostics report of INTERFACES.md §1; failed runs the error record. Borrowed:
/// valid until `runlet_error_free(err)`.
///
/// Thread-safety: any thread, concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_details_json(err: *const runlet_error) -> runlet_str {
    ffi_boundary!(runlet_str, {
        // SAFETY: the caller passes NULL or a live error.
        unsafe { err.as_ref() }.map_or_else(runlet_str::empty, |err| runlet_str::of(err.details_json()))
    })
}

/// Frees an error. NULL is a no-op; each error is freed at most once.
///
/// Thread-safety: any thread; not concurrently with other calls on the same error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_free(err: *mut runlet_error) {
    ffi_boundary!((), {
        // SAFETY: the caller passes NULL or a live error, freed once.
        drop(unsafe { runlet_error::from_raw(err) });
    })
}

/// Builds an error for a host callback to return (journal callbacks) or to fail a tool call
/// with. Copies `message` (invalid UTF-8 is replaced with U+FFFD). Never returns NULL. The
/// caller owns the result until it hands it to Runlet (returning it from a callback or passing
/// it to `runlet_tool_call_fail`) or frees it.
///
/// Failing a tool call with it gives the tool error the code's name (`RUNLET_ERR_TIMEOUT` gives
/// `"TIMEOUT"`); `RUNLET_ERR_CANCELLED` acknowledges a cancelled call. `RUNLET_OK` is no
/// error's code: asked for it, the result is a `RUNLET_ERR_INVALID_ARGUMENT` error saying so.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_new(code: runlet_code, message: runlet_str) -> *mut runlet_error {
    ffi_boundary!(*mut runlet_error, {
        // SAFETY: the caller passes a valid view.
        let message = unsafe { lossy(message) };
        if code == RUNLET_OK {
            return Error::new(
                RUNLET_ERR_INVALID_ARGUMENT,
                format!(
                    "runlet_error_new was given RUNLET_OK, which is no error's code (message: {message})"
                ),
            )
            .into_raw();
        }
        Error::new(code, message).into_raw()
    })
}

/// Builds the error a tool reports (spec §3.5): the tool's own stable `tool_code` (such as
/// `"RATE_LIMITED"`), a message, whether retrying may succeed, how long the tool asks to wait
/// first (`retry_after_ms`; negative for no hint) and `details_json` (a JSON object, or empty for
/// none). The error's code is `RUNLET_ERR_TOOL_FAILED`. Copies its inputs; never returns NULL.
///
/// When `tool_code` is empty or not UTF-8, or `details_json` is not a JSON object, the result is
/// instead a `RUNLET_ERR_INVALID_ARGUMENT`/`RUNLET_ERR_INVALID_JSON` error saying so, and a call
/// failed with it reports that.
///
/// Thread-safety: any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn runlet_error_new_tool(
    tool_code: runlet_str,
    message: runlet_str,
    retryable: bool,
    retry_after_ms: i64,
    details_json: runlet_str,
) -> *mut runlet_error {
    ffi_boundary!(*mut runlet_error, {
        // SAFETY: the caller passes valid views.
        let built = unsafe { tool_error(tool_code, message, retryable, retry_after_ms, details_json) };
        built.unwrap_or_else(|error| error).into_raw()
    })
}

/// # Safety
/// The views must be valid for the call.
unsafe fn tool_error(
    tool_code: runlet_str,
    message: runlet_str,
    retryable: bool,
    retry_after_ms: i64,
    details_json: runlet_str,
) -> Result<Error, Error> {
    // SAFETY: forwarded from the caller.
    let (tool_code, details_text) =
        unsafe { (tool_code.to_str("tool_code")?, details_json.to_str("details_json")?) };
    if tool_code.is_empty() {
        return Err(Error::new(RUNLET_ERR_INVALID_ARGUMENT, "`tool_code` is empty"));
    }
    let details = if details_text.is_empty() {
        None
    } else {
        match parse_json(details_text) {
            Ok(Value::Object(object)) => Some(object),
            Ok(_) => return Err(Error::new(RUNLET_ERR_INVALID_JSON, "`details_json` is not a JSON object")),
            Err(error) => return Err(invalid_json("details_json", &error)),
        }
    };
    let mut error = Error::new(RUNLET_ERR_TOOL_FAILED, unsafe { lossy(message) });
    if !details_text.is_empty() {
        error.details_json = details_text.to_owned();
    }
    error.tool = ToolFailure {
        tool_code: Some(tool_code.to_owned()),
        retryable,
        retry_after_ms: u64::try_from(retry_after_ms).ok(),
        details,
    };
    Ok(error)
}

/// The text of `message`, invalid UTF-8 replaced; a NULL view with a length says so.
///
/// # Safety
/// The view must be valid for the call.
unsafe fn lossy(message: runlet_str) -> String {
    if message.ptr.is_null() {
        return if message.len == 0 { String::new() } else { "(the message pointer was NULL)".to_owned() };
    }
    // SAFETY: non-NULL, and the caller vouches for `len` bytes.
    let bytes = unsafe { std::slice::from_raw_parts(message.ptr.cast::<u8>(), message.len) };
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(view: runlet_str) -> String {
        // SAFETY: views returned by the error functions, read while the error lives.
        unsafe { view.to_str("view").expect("UTF-8").to_owned() }
    }

    #[test]
    fn host_errors_keep_code_message_and_free_once() {
        // SAFETY: errors built and freed here; NULL cases are documented no-ops.
        unsafe {
            let err = runlet_error_new(RUNLET_ERR_JOURNAL, runlet_str::of("disk full"));
            assert_eq!(runlet_error_code(err), RUNLET_ERR_JOURNAL);
            assert_eq!(text(runlet_error_message(err)), "disk full");
            assert_eq!(text(runlet_error_details_json(err)), "");
            runlet_error_free(err);
            runlet_error_free(std::ptr::null_mut());
            assert_eq!(runlet_error_code(std::ptr::null()), RUNLET_OK);
            let bad = [0xffu8, b'x'];
            let err = runlet_error_new(7, runlet_str { ptr: bad.as_ptr().cast(), len: 2 });
            assert_eq!(text(runlet_error_message(err)), "\u{fffd}x");
            runlet_error_free(err);
        }
    }

    #[test]
    fn tool_errors_carry_the_tool_code_retry_hints_and_details() {
        // SAFETY: views of literals; the error is freed here.
        let error = unsafe {
            let raw = runlet_error_new_tool(
                runlet_str::of("RATE_LIMITED"),
                runlet_str::of("slow down"),
                true,
                1500,
                runlet_str::of(r#"{"bucket":"orders"}"#),
            );
            runlet_error::from_raw(raw).expect("not NULL")
        };
        assert_eq!(error.code(), RUNLET_ERR_TOOL_FAILED);
        assert_eq!(error.details_json(), r#"{"bucket":"orders"}"#);
        let tool = error.to_tool_error("shop.orders");
        assert_eq!(
            (tool.code.as_str(), tool.message.as_str(), tool.retryable),
            ("RATE_LIMITED", "slow down", true)
        );
        assert_eq!(tool.retry_after, Some(std::time::Duration::from_millis(1500)));
        assert_eq!(tool.details.entries().len(), 1);
    }

    #[test]
    fn malformed_tool_errors_say_what_is_wrong() {
        // SAFETY: views of literals.
        let (empty_code, not_object, broken) = unsafe {
            (
                tool_error(runlet_str::empty(), runlet_str::empty(), false, -1, runlet_str::empty()),
                tool_error(runlet_str::of("X"), runlet_str::empty(), false, -1, runlet_str::of("[1]")),
                tool_error(runlet_str::of("X"), runlet_str::empty(), false, -1, runlet_str::of("{")),
            )
        };
        assert_eq!(empty_code.expect_err("empty code").code(), RUNLET_ERR_INVALID_ARGUMENT);
        assert_eq!(not_object.expect_err("array").code(), RUNLET_ERR_INVALID_JSON);
        let broken = broken.expect_err("truncated");
        assert_eq!(broken.code(), RUNLET_ERR_INVALID_JSON);
        assert!(broken.details_json().contains(r#""line":1"#), "{}", broken.details_json());
    }

    #[test]
    fn plain_codes_name_the_tool_error_and_cancelled_acknowledges() {
        let timeout = Error::new(RUNLET_ERR_TIMEOUT, "upstream timed out").to_tool_error("crm.customer");
        assert_eq!((timeout.code.as_str(), timeout.retryable), ("TIMEOUT", false));
        let cancelled = Error::new(RUNLET_ERR_CANCELLED, "stopped").to_tool_error("crm.customer");
        assert_eq!(cancelled.code, "RL6201");
        assert_eq!(Error::new(999, "future").to_tool_error("t").code, "INTERNAL");
    }
}
