//! Codes for names, schemas, types and conversions (RL2xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range TYPES;
    /// A name that is no binding in scope, host input or registry root.
    UNKNOWN_NAME = 2101,
    /// A call of a path the registry has no tool for.
    UNKNOWN_TOOL = 2102,
    /// A property no schema of the value declares.
    UNKNOWN_PROPERTY = 2103,
    /// A binding named like a registry root, which every scope reserves.
    BINDING_SHADOWS_REGISTRY_ROOT = 2104,
    /// A call of something that is not a registered tool: a local value or a projection.
    NOT_CALLABLE = 2105,
    /// A tool or namespace path used as a value without calling it.
    TOOL_USED_AS_VALUE = 2106,
    /// A call with more or fewer arguments than any call shape of the tool accepts.
    ARGUMENT_COUNT = 2201,
    /// A call whose arguments match neither the positional nor the object call shape.
    ARGUMENT_SHAPE = 2202,
    /// The same static key twice in one object literal.
    DUPLICATE_OBJECT_KEY = 2203,
    /// A value whose schema does not convert to the schema its context expects.
    TYPE_MISMATCH = 2204,
    /// A property only some variants of a union have.
    PARTIAL_PROPERTY = 2205,
    /// A target and index whose kinds no row of the indexing table accepts.
    INDEX_MISMATCH = 2206,
    /// A property the closed target object does not declare.
    UNDECLARED_PROPERTY = 2207,
    /// A required property that is absent or may be absent.
    REQUIRED_PROPERTY_MISSING = 2208,
    /// Operands whose schemas no row of the operator table accepts.
    OPERAND_TYPES = 2301,
    /// A condition whose schema is known and is not Boolean.
    CONDITION_NOT_BOOLEAN = 2302,
    /// Several union variants accept a value at the same conversion rank.
    AMBIGUOUS_VARIANTS = 2303,
    /// A value that may be null where a String is required.
    NULLABLE_TO_STRING = 2304,
    /// Bytes where a String is required, directly or as a leaf of a formatted composite.
    BYTES_TO_STRING = 2305,
    /// An object or list formatted into a String parameter meant for human prose (warning).
    PROSE_PARAMETER = 2306,
    /// A `for` or `fold` over a value that is not a list, object or map.
    NOT_ITERABLE = 2307,
    /// A union grew past the variant limit and was widened to any value (warning).
    UNION_WIDENED = 2308,
    /// A literal outside what its context accepts (range, length, enumeration, or i64).
    LITERAL_OUT_OF_RANGE = 2310,
    /// A Number literal where an Integer is required.
    NUMBER_LITERAL_TO_INTEGER = 2311,
    /// A `fold` body whose result does not convert back to the accumulator's schema.
    FOLD_ACCUMULATOR_MISMATCH = 2313,
    /// A computed object key whose schema is statically not a String or scalar.
    INVALID_COMPUTED_KEY_KIND = 2315,
}
