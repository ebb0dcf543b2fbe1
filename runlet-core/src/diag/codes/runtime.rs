//! Codes for runtime compute and data failures (RL5xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range RUNTIME;
    /// Checked Integer arithmetic overflowed i64.
    NUMERIC_OVERFLOW = 5101,
    /// Division or remainder by zero.
    DIVISION_BY_ZERO = 5102,
    /// A Number operation produced NaN or an infinity.
    NON_FINITE_NUMBER = 5103,
    /// An Integer had to widen to Number but has no exact binary64 value.
    INEXACT_INTEGER_WIDENING = 5104,
    /// An operator's operands are of kinds no row of the operator table accepts.
    OPERAND_KIND_MISMATCH = 5201,
    /// A condition or logical operand is not a Boolean (there is no truthiness).
    NOT_BOOLEAN = 5202,
    /// The target cannot be indexed by an index of that kind.
    NOT_INDEXABLE = 5203,
    /// A list, string or bytes index is outside `[0, length)` after normalization.
    INDEX_OUT_OF_BOUNDS = 5205,
    /// An object or map has no such key.
    KEY_NOT_FOUND = 5206,
    /// A value containing Bytes was formatted as JSON.
    NOT_JSON_REPRESENTABLE = 5207,
    /// A computed object key is not a String, Integer, Number or Boolean.
    INVALID_COMPUTED_KEY = 5209,
    /// No conversion exists from the value's kind to the target kind.
    UNSUPPORTED_CONVERSION = 5301,
    /// A required property of the target object is absent.
    MISSING_REQUIRED_PROPERTY = 5302,
    /// The value has a property the closed target object does not declare.
    UNEXPECTED_PROPERTY = 5303,
    /// Several union variants accept the value equally well and give different results.
    AMBIGUOUS_CONVERSION = 5304,
    /// A regular expression does not compile or exceeds the regex size limits.
    INVALID_REGEX = 5401,
    /// `json.parse` was given text that is not strict JSON.
    INVALID_JSON_TEXT = 5402,
    /// `number.parse` or `number.parse_integer` was given text that is not a number.
    INVALID_NUMBER_TEXT = 5403,
    /// `time.parse` was given text that is not an RFC 3339 date-time.
    INVALID_TIME_TEXT = 5404,
    /// An intrinsic argument is outside the function's domain (an empty separator, a range).
    INTRINSIC_ARGUMENT_INVALID = 5405,
    /// An intrinsic would build a string or list larger than its cap.
    INTRINSIC_RESULT_TOO_LARGE = 5406,
    /// `list.sort` was given elements that are not all numbers or all strings.
    NOT_SORTABLE = 5407,
    /// The host could not sample a nondeterministic intrinsic (no clock or random source).
    SAMPLE_UNAVAILABLE = 5408,
}
