//! Codes for syntax and structure (RL1xxx); RL12xx are the analyzer's structural lints.
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
    /// A string literal holding bidirectional control characters (warning).
    BIDI_CONTROL_IN_STRING = 1006,
    /// A token where the grammar allows none of its kind.
    UNEXPECTED_TOKEN = 1010,
    /// An opening `(`, `[` or `{` that is never closed.
    UNCLOSED_DELIMITER = 1011,
    /// A closing delimiter with no opening one.
    UNMATCHED_CLOSING_DELIMITER = 1012,
    /// A missing `,` between items or a missing line break / `;` between statements.
    MISSING_SEPARATOR = 1013,
    /// A statement-form `if`, `for`, `fold` or `boundary` whose value is not bound or returned.
    STATEMENT_FORM_CONTROL = 1014,
    /// A standalone call or other expression used as a statement.
    EXPRESSION_STATEMENT = 1015,
    /// The program, an `if` branch, a `boundary` or a `catch` body without `return`.
    MISSING_RETURN = 1016,
    /// A `for` or `fold` body without `return`.
    FOR_BODY_MISSING_RETURN = 1017,
    /// `skip` outside a `for`/`fold` body or inside a `boundary`.
    SKIP_OUTSIDE_LOOP_BODY = 1018,
    /// Statements after the `return` of a block.
    EARLY_RETURN = 1019,
    /// `limit N` on a `fold`.
    FOLD_WITH_LIMIT = 1020,
    /// A second `return` in one block.
    DUPLICATE_RETURN = 1021,
    /// `a < b < c` and other chains of comparison operators.
    COMPARISON_CHAIN = 1022,
    /// A name declared twice in one scope.
    DUPLICATE_BINDING = 1023,
    /// A reserved word used as a binding name.
    RESERVED_WORD_AS_BINDING = 1024,
    /// A line break that ends a construct too early (`{`, `else`, `catch` or `.` on the next line).
    MISPLACED_LINE_BREAK = 1025,
    /// `fail` with other than two or three arguments.
    FAIL_ARGUMENTS = 1026,
    /// `limit`/`retry` without an integer literal, or `limit 0`.
    INVALID_COUNT = 1027,
    /// `return` without a value.
    EMPTY_RETURN = 1028,
    /// A `boundary` without its `catch` clause.
    MISSING_CATCH = 1029,
    /// `const x =`, `let x =`, `var x =`.
    FOREIGN_DECLARATION = 1030,
    /// `await`.
    AWAIT = 1031,
    /// A lambda (`x => …`, `lambda x: …`, `function (…) {…}`).
    LAMBDA = 1032,
    /// A function definition (`def`, `function`, `fn`).
    FUNCTION_DEFINITION = 1033,
    /// `x += 1`, `x++` and other reassignments.
    COMPOUND_ASSIGNMENT = 1034,
    /// `elif` instead of `else if`.
    ELIF = 1035,
    /// `&&`, `||`, `!`, `===`, `!==`, `??`, `?.`.
    FOREIGN_OPERATOR = 1036,
    /// `None`, `True`, `False`, `nil`, `undefined` where `null`/`true`/`false` is meant.
    FOREIGN_LITERAL = 1037,
    /// A single-quoted string or a backtick template string.
    FOREIGN_STRING = 1038,
    /// `.map(x => …)`, `.filter(…)` and other collection methods with a lambda.
    COLLECTION_METHOD = 1039,
    /// `[f(x) for x in xs]`.
    LIST_COMPREHENSION = 1040,
    /// `try { … } catch (e) { … }` or `catch (err)`.
    TRY_CATCH = 1041,
    /// `cond ? a : b`.
    TERNARY = 1042,
    /// `while`, `for (…)`, `for x of xs`.
    FOREIGN_LOOP = 1043,
    /// Python's `not in`, `is`, `is not`.
    PYTHON_OPERATOR = 1044,
    /// `f(name = value)`.
    KEYWORD_ARGUMENTS = 1045,
    /// A Python-style `header:` with an indented body.
    COLON_BLOCK = 1046,
    /// `name: Type = value`.
    TYPE_ANNOTATION = 1047,
    /// `return a, b` or `x = a, b`: a Python tuple.
    TUPLE = 1048,
    /// Python's `raise X(…)`, JavaScript's `throw new X(…)`.
    FOREIGN_RAISE = 1049,
    /// `{ a, b } = value`, `[a, b] = value` or `a, b = value`: a destructuring binding.
    DESTRUCTURING = 1050,
    /// A binding that shadows a binding or host input of an enclosing scope (warning).
    SHADOWED_BINDING = 1201,
    /// Retired: an unreachable effectful binding (effects now always run; spec §2.5). Reserved.
    UNREACHABLE_EFFECT = 1204,
    /// A binding nothing reads and whose value has no effect, so it is pruned (warning).
    UNUSED_BINDING = 1205,
    /// An effectful statement in a `fold` body that never reads the accumulator (warning).
    FOLD_EFFECT_IGNORES_ACCUMULATOR = 1206,
}
