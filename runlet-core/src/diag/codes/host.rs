//! Codes for host integration (RL8xxx).
//! Add a code here together with its catalogue entry in `docs/diagnostics/`.

declare_codes! {
    range HOST;
    /// The registry file is not valid JSON.
    REGISTRY_NOT_JSON = 8001,
    /// A registry field is missing or has the wrong JSON type.
    REGISTRY_BAD_FIELD = 8002,
    /// A registry, tool, parameter or error object has a field the format does not define.
    REGISTRY_UNKNOWN_FIELD = 8003,
    /// A tool name is not a dotted path of identifiers, or its root is a reserved word.
    INVALID_TOOL_NAME = 8004,
    /// Two tools have the same name.
    DUPLICATE_TOOL = 8005,
    /// `execution` is not one of the five execution classes.
    INVALID_EXECUTION_CLASS = 8006,
    /// A tool gives `params` and `inputSchema` whose call shapes can accept the same call.
    OVERLAPPING_CALL_SHAPES = 8007,
    /// A schema uses a JSON Schema keyword outside Runlet's subset.
    UNSUPPORTED_SCHEMA_KEYWORD = 8008,
    /// An unsupported constraint keyword was dropped (warning; the host allowed it).
    SCHEMA_KEYWORD_DROPPED = 8009,
    /// A supported schema keyword has an invalid value or contradicts its siblings.
    INVALID_SCHEMA = 8010,
    /// A `$ref` is not local, points at nothing, or recurses without a list, object or map.
    BAD_SCHEMA_REF = 8011,
    /// A named discriminator does not tell a union's variants apart.
    INVALID_DISCRIMINATOR = 8012,
    /// A union has more variants than the configured maximum and is treated as any value (warning).
    UNION_WIDENED_TO_ANY = 8013,
    /// Schemas nest (counting references) deeper than the configured maximum.
    SCHEMA_TOO_DEEP = 8014,
    /// A positional parameter list is malformed (duplicate names, a required after an optional).
    INVALID_PARAMS = 8015,
    /// `inputSchema` does not describe an object.
    INPUT_SCHEMA_NOT_OBJECT = 8016,
    /// The host prohibits `unsafe` tools and the registry has one.
    UNSAFE_TOOL_PROHIBITED = 8017,
    /// A host input name is not an identifier, is reserved, or is a registry root.
    INVALID_HOST_INPUT = 8018,
    /// A tool's MCP `annotations` has a hint Runlet does not know (warning).
    UNKNOWN_TOOL_ANNOTATION = 8019,
    /// A tool lists the same error code twice.
    DUPLICATE_ERROR_CODE = 8020,
    /// A registry with the prelude has a tool in one of the prelude's namespaces.
    PRELUDE_NAMESPACE_TAKEN = 8021,
    /// The registry file's `prelude` is not `none`, `deterministic` or `standard`.
    INVALID_PRELUDE = 8022,
    /// An object in the registry file has the same key twice.
    REGISTRY_DUPLICATE_KEY = 8023,
    /// Two tool names differ only by invisible (default-ignorable) characters.
    CONFUSABLE_TOOL_NAME = 8024,
    /// A tool name that is not a dotted path of identifiers was mapped to one (warning).
    TOOL_NAME_MAPPED = 8025,
    /// Two tool names map to the same registry name.
    MAPPED_TOOL_NAMES_COLLIDE = 8026,
    /// An MCP server's tool did not import and was left out of the registry (warning).
    TOOL_LEFT_OUT = 8027,
    /// JSON supplied by the host is not valid portable JSON.
    INVALID_HOST_JSON = 8101,
    /// The host supplied an unusable digest key.
    INVALID_DIGEST_KEY = 8102,
    /// A journal or transcript recorded under one digest key is replayed under another.
    DIGEST_KEY_MISMATCH = 8103,
    /// A program is started or resumed on a runtime other than the one that compiled it.
    FOREIGN_PROGRAM = 8104,
    /// A limit the host sets is not a known key with a whole number as its cap.
    INVALID_LIMIT = 8105,
    /// A runtime could not be built: a part it needs is missing or its worker threads could not
    /// start.
    RUNTIME_UNAVAILABLE = 8106,
    /// A trace context the host gives a run to continue is not a valid W3C `traceparent`.
    INVALID_TRACE_CONTEXT = 8107,
    /// A tool fixture file, tool entry, case or error object has the wrong JSON type or a value
    /// out of range.
    TOOL_FIXTURE_BAD_FIELD = 8201,
    /// A case or error object of a tool fixture file has a field the format does not define.
    TOOL_FIXTURE_UNKNOWN_FIELD = 8202,
    /// A tool fixture case gives both `result` and `error`, or neither.
    TOOL_FIXTURE_ANSWER = 8203,
    /// No case of the tool fixture file answers a call.
    NO_FIXTURE_CASE = 8204,
    /// A transcript file, call or error object has a missing field, a field of the wrong JSON
    /// type, a value out of range, or a field the format does not define.
    TRANSCRIPT_BAD_FIELD = 8301,
    /// A transcript file names a format or format version this Runlet does not read.
    TRANSCRIPT_FORMAT = 8302,
    /// A transcript was recorded with a different program or registry than the one replayed.
    REPLAY_WORKFLOW_CHANGED = 8303,
    /// A replayed run requested a call the transcript has no matching entry for.
    REPLAY_DRIFT = 8304,
    /// A replayed run ended without requesting a call the transcript recorded.
    REPLAY_UNCONSUMED = 8305,
    /// A host recovery decision names an operation that is not uncertain: no call of the run is
    /// left dispatching under it, or a decision about it is already journaled.
    OPERATION_NOT_UNCERTAIN = 8401,
    /// The operation's execution class does not allow the recovery decision the host asked for.
    RECOVERY_DECISION_REFUSED = 8402,
    /// The output a host resolved an operation with does not match the tool's output schema.
    RESOLVED_OUTPUT_MISMATCH = 8403,
    /// A host decision (a cancellation, a resolution) about a run whose journal records its end.
    RUN_ENDED = 8404,
    /// Recovery at start left a run alone because calls it left dispatching have an outcome
    /// only the host can settle.
    RUN_NEEDS_RESOLUTION = 8405,
    /// An operator asked to delete a run that has not ended.
    RUN_NOT_ENDED = 8406,
    /// The command line is malformed, or a flag has a value the command does not take.
    INVALID_ARGUMENT = 8501,
    /// A file the command was given cannot be opened or read.
    FILE_UNREADABLE = 8502,
    /// A file the command was given is not a regular file (a directory, a FIFO, a device).
    NOT_A_REGULAR_FILE = 8503,
    /// A file the command was given is larger than the cap for its kind.
    FILE_TOO_LARGE = 8504,
    /// A text file the command was given is not UTF-8.
    FILE_NOT_UTF8 = 8505,
    /// A file the command writes cannot be written.
    FILE_UNWRITABLE = 8506,
    /// `runlet explain` was asked about a code the catalogue does not have.
    UNKNOWN_DIAGNOSTIC_CODE = 8507,
    /// A `--mcp` value or an entry of an `mcpServers` configuration is malformed.
    MCP_SERVER_SPEC = 8601,
    /// An MCP server could not be started or reached, or did not complete the handshake.
    MCP_SERVER_START = 8602,
    /// An MCP server's `tools/list` failed or answered something that is not a tool list.
    MCP_TOOLS_LIST = 8603,
}
