//! Codes for syntax and structure (RL1xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range SYNTAX;
    /// A character that no token starts with.
    UNEXPECTED_CHARACTER = 1001,
    /// A string literal without its closing quote on the same line.
    UNTERMINATED_STRING = 1002,
    /// A bad escape, lone surrogate or raw control character in a string literal.
    INVALID_ESCAPE = 1003,
    /// Digits followed by letters, underscores or a dangling `.` (`0x1F`, `1_000`, `10ms`).
    MALFORMED_NUMBER = 1004,
    /// A `/* … */` comment.
    BLOCK_COMMENT = 1005,
    /// A single-quoted string.
    SINGLE_QUOTED_STRING = 1038,
}
