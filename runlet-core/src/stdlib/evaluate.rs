//! Evaluating a deterministic intrinsic: each function's implementation by name, over the
//! canonical argument list the analyzer converted to its parameters.

use crate::value::{Value, ValueError};

use super::args::Args;
use super::catalogue::PureFunction;
use super::regex::PatternCache;
use super::{hash, json, list, number, regex, text, time};

impl PureFunction {
    /// The function's result for `arguments`; the same arguments always give the same result.
    pub fn evaluate(self, arguments: &[Value]) -> Result<Value, ValueError> {
        self.evaluate_with(arguments, &mut PatternCache::default())
    }

    /// Like [`PureFunction::evaluate`], compiling regex patterns through `patterns`.
    pub fn evaluate_with(
        self,
        arguments: &[Value],
        patterns: &mut PatternCache,
    ) -> Result<Value, ValueError> {
        use PureFunction::*;
        let args = Args { name: self.signature().name, values: arguments };
        match self {
            TextLength => text::length(args),
            TextUpper => text::upper(args),
            TextLower => text::lower(args),
            TextTrim => text::trim(args),
            TextSplit => text::split(args),
            TextJoin => text::join(args),
            TextReplace => text::replace(args),
            TextStartsWith => text::starts_with(args),
            TextEndsWith => text::ends_with(args),
            TextSlice => text::slice(args),
            RegexMatches => regex::matches(args, patterns),
            RegexFind => regex::find(args, patterns),
            RegexFindAll => regex::find_all(args, patterns),
            RegexCaptures => regex::captures(args, patterns),
            RegexReplace => regex::replace(args, patterns),
            RegexSplit => regex::split(args, patterns),
            ListLength => list::length(args),
            ListSlice => list::slice(args),
            ListReverse => list::reverse(args),
            ListSort => list::sort(args),
            ListUnique => list::unique(args),
            ListFlatten => list::flatten(args),
            ListRange => list::range(args),
            JsonParse => json::parse(args),
            JsonStringify => json::stringify(args),
            NumberParse => number::parse(args),
            NumberParseInteger => number::parse_integer(args),
            NumberFloor => number::floor(args),
            NumberCeil => number::ceil(args),
            NumberRound => number::round(args),
            NumberFormat => number::format(args),
            TimeFormat => time::format(args),
            TimeParse => time::parse(args),
            HashSha256 => hash::sha256_hex(args),
            HashDigest => hash::digest(args),
        }
    }
}
