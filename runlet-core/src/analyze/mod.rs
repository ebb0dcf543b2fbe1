//! The analyzer (spec §3.2–3.4, §2.4–2.8, §8.4): names resolved against scopes, host inputs and
//! the frozen registry; schemas inferred bidirectionally; conversions, effects and lints; HIR out.
//!
//! ```
//! use runlet::analyze::{AnalyzeOptions, Inputs, analyze};
//! use runlet::registry::{Registry, RegistryOptions};
//!
//! let registry = Registry::from_json_str(
//!     r#"{"tools": [{"name": "crm.customer", "params": [{"name": "id", "schema": {"type": "string"}}],
//!        "outputSchema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]},
//!        "execution": "pure"}]}"#,
//!     &RegistryOptions::default(),
//! )
//! .expect("loads")
//! .registry;
//! let analysis = analyze("c = crm.customer(\"c-42\")\nreturn c.emali\n", &registry, &Inputs::new(), &AnalyzeOptions::default());
//! assert_eq!(analysis.diagnostics[0].code.to_string(), "RL2103");
//! assert!(analysis.hir.is_none());
//! ```
//!
//! # What analysis does, in one pass (`lower`)
//!
//! - **Names.** A name is a binding of an enclosing block (declared above its use), a host input
//!   (the registry's `inputs` schema, else the schema inferred from the supplied value), or a
//!   registry path. Dotted paths whose root is a registry root are registry paths: the longest
//!   prefix naming a tool is the callee (spec §2.3). Registry roots are reserved in every scope.
//!   Unknown names, tools and properties get the weighted candidate search of spec §3.4
//!   (`candidates`); names from other languages (`None`, `len`, `print`) get targeted fixes
//!   (`foreign`). The parser's `RL1037` warning for such a name is replaced by the analyzer's
//!   `RL2101` error once the name is known to be unbound.
//! - **Types.** Every expression has a schema in an arena layered on the registry's (`types`);
//!   `fail` has the analyzer's own `Never`. Tool outputs come from their schemas; literals,
//!   objects and lists are checked against what their context expects, property by property.
//! - **Conversions.** Wherever a value meets a typed context (a parameter, a property, a
//!   condition, an operator row, a `fail` part), `fit` decides statically whether its schema
//!   converts, at which rank (spec §3.3), and whether the runtime must still check; a Convert
//!   node is inserted unless the value already fits exactly. A literal's conversion is evaluated
//!   now with `value::convert` on the target's shape (`schema::ShapeMap`) and validated against
//!   the target's constraints, so compile time and run time agree.
//! - **Runtime codes at compile time.** A literal-only operation that would fail at run time
//!   (overflow, division by zero, a literal index out of range, …) is reported as an error with
//!   the runtime failure's own code (`RL5101`, `RL5102`, `RL5205`, …), at the expression's span,
//!   with a note that it was found while checking. Two cases have compile codes of their own
//!   because the spec names them: a Number literal into an Integer (`RL2311`) and a computed key
//!   whose schema is statically not a scalar (`RL2315`).
//! - **Effects.** An expression is effectful when it may call a tool that is not `pure`; a
//!   statement whose value is effectful, or may raise `fail` (the guard idiom of spec §2.7.3),
//!   is an implicit root. A binding that is neither read nor a root is pruned with `RL1205`.
//! - **Bounds.** Unions wider than `max_union_variants` widen to `Any` (`RL2308`); diagnostics
//!   stop at `max_diagnostics` (`RL4003`); every expression and static conversion step counts
//!   against `max_work` (`RL4004`). Each expression is lowered once; memoized conversion checks
//!   and per-binding reference lists keep the pass linear in the source.
//!
//! Analysis runs only on programs without syntax errors; the HIR is produced only when analysis
//! reports no error.

mod candidates;
mod compiled;
pub mod dump;
mod fit;
mod foreign;
mod heal;
pub mod hir;
mod inputs;
mod lower;
mod types;

use std::collections::HashMap;

pub use compiled::{CompiledProgram, LANGUAGE_VERSION, WorkflowIdentity};
pub use heal::heal;
pub use inputs::{Inputs, InputsError};

use crate::diag::{Diagnostic, codes};
use crate::registry::Registry;
use crate::syntax::{self, Parse, ParseOptions};
use crate::value::ValueCaps;

/// The hash map of analysis lookups: a fast hash with a fixed seed. Such maps are only looked
/// into, never iterated into output.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The bounds and settings of one analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalyzeOptions {
    /// How the source is parsed (size, nesting and diagnostic limits of the front end).
    pub parse: ParseOptions,
    /// Unions with more distinct variants widen to `Any` with an `RL2308` warning.
    pub max_union_variants: usize,
    /// The most diagnostics reported (parse and analysis together); `RL4003` notes the rest.
    pub max_diagnostics: usize,
    /// Units of work (expressions lowered, static conversion steps) before `RL4004`.
    pub max_work: u64,
    /// Names candidate searches may score ("did you mean"); past it, diagnostics carry no
    /// candidates. Bounds the diagnostic work a program of many misspellings causes.
    pub max_candidate_work: u64,
    /// The largest `limit N` a `for` may declare (`RL4005` above it).
    pub max_loop_limit: u32,
    /// The largest `retry N` a `boundary` may declare (`RL4005` above it).
    pub max_retries: u32,
    /// The value-size caps literal folding stays within: a folded value that would cross one
    /// is the limit's own error (`RL4113`–`RL4116`) at compile time, as it would be in every run.
    pub value_caps: ValueCaps,
}

impl AnalyzeOptions {
    /// The bounds a host that sets none gets.
    pub const DEFAULT: AnalyzeOptions = AnalyzeOptions {
        parse: ParseOptions::DEFAULT,
        max_union_variants: 64,
        max_diagnostics: 100,
        max_work: 1_000_000,
        max_candidate_work: 100_000,
        max_loop_limit: 1024,
        max_retries: 16,
        value_caps: ValueCaps::DEFAULT,
    };
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions::DEFAULT
    }
}

/// The result of analysis: the HIR when the program has no error, and every diagnostic (parse
/// and analysis) ordered by position.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub hir: Option<hir::Program>,
    pub diagnostics: Vec<Diagnostic>,
    pub identity: WorkflowIdentity,
    /// The units of work analysis spent (bounded by `max_work`); 0 when parsing failed.
    pub work: u64,
}

impl Analysis {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The compiled program, when analysis produced one.
    pub fn compiled(self) -> Option<CompiledProgram> {
        let identity = self.identity;
        self.hir.map(|program| CompiledProgram::new(identity, program))
    }
}

/// Parses and analyzes `source` against `registry` and `inputs`. Never panics.
pub fn analyze(source: &str, registry: &Registry, inputs: &Inputs, options: &AnalyzeOptions) -> Analysis {
    let parse = syntax::parse_with(source, &options.parse);
    analyze_parsed(source, &parse, registry, inputs, options)
}

/// Analyzes an existing parse of `source` (which must be the text it was parsed from).
pub fn analyze_parsed(
    source: &str,
    parse: &Parse,
    registry: &Registry,
    inputs: &Inputs,
    options: &AnalyzeOptions,
) -> Analysis {
    let identity = WorkflowIdentity::new(source, registry);
    if parse.has_errors() {
        return Analysis { hir: None, diagnostics: parse.diagnostics.clone(), identity, work: 0 };
    }
    let room = options.max_diagnostics.saturating_sub(parse.diagnostics.len());
    let lowerer = lower::Lowerer::new(source, &parse.program, registry, inputs, options, room);
    let (hir, found, work) = lowerer.run(&parse.program);
    let superseded = |d: &Diagnostic| {
        d.code == codes::FOREIGN_LITERAL
            && found.iter().any(|f| f.code == codes::UNKNOWN_NAME && f.span == d.span)
    };
    let mut diagnostics: Vec<Diagnostic> =
        parse.diagnostics.iter().filter(|d| !superseded(d)).cloned().collect();
    diagnostics.extend(found);
    diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    Analysis { hir, diagnostics, identity, work }
}
