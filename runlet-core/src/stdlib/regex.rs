//! The `regex` namespace over the `regex` crate: linear-time matching (no backreferences or
//! look-around), patterns compiled under size limits, failures as `RL5401`.

use std::collections::VecDeque;
use std::sync::Arc;

use ::regex::{Regex, RegexBuilder};

use crate::diag::codes;
use crate::value::{Value, ValueError};

use super::MAX_RESULT_BYTES;
use super::args::{Args, strings};

/// The longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// The compiled program's size limit (the crate's `size_limit`).
const COMPILED_SIZE_LIMIT: usize = 1 << 20;
/// The lazy DFA's cache limit (the crate's `dfa_size_limit`).
const DFA_SIZE_LIMIT: usize = 1 << 21;
/// How deeply groups and repetitions may nest.
const NEST_LIMIT: u32 = 64;
/// How many compiled patterns a [`PatternCache`] keeps.
const PATTERN_CACHE_ENTRIES: usize = 32;

/// The patterns one run has compiled, so that a pattern evaluated in every loop iteration is
/// compiled once. Bounded: past 32 patterns the oldest is dropped. A run owns its cache; runs
/// share nothing.
#[derive(Debug, Default)]
pub struct PatternCache {
    entries: VecDeque<(Arc<str>, Regex)>,
}

impl PatternCache {
    /// `pattern` compiled (see [`compile`]), from the cache when it was compiled before.
    pub fn compiled(&mut self, pattern: &str) -> Result<Regex, ValueError> {
        if let Some((_, regex)) = self.entries.iter().find(|(known, _)| **known == *pattern) {
            return Ok(regex.clone());
        }
        let regex = compile(pattern)?;
        if self.entries.len() == PATTERN_CACHE_ENTRIES {
            self.entries.pop_front();
        }
        self.entries.push_back((pattern.into(), regex.clone()));
        Ok(regex)
    }
}

/// Compiles `pattern` under the prelude's limits. The error is `RL5401` with one line saying
/// what is wrong and, for a syntax error, the byte range of the pattern at fault (details
/// `start`, `end`).
pub fn compile(pattern: &str) -> Result<Regex, ValueError> {
    let invalid = |reason: String| {
        ValueError::new(codes::INVALID_REGEX, format!("the pattern does not compile: {reason}"))
            .with_detail("pattern", pattern)
    };
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(invalid(format!(
            "it has {} bytes, more than the limit of {MAX_PATTERN_BYTES}",
            pattern.len()
        ))
        .with_detail("limit", MAX_PATTERN_BYTES as i64));
    }
    let syntax = regex_syntax::ParserBuilder::new().nest_limit(NEST_LIMIT).build().parse(pattern);
    if let Err(error) = syntax {
        let (reason, span) = match &error {
            regex_syntax::Error::Parse(e) => (e.kind().to_string(), Some(*e.span())),
            regex_syntax::Error::Translate(e) => (e.kind().to_string(), Some(*e.span())),
            _ => (error.to_string(), None),
        };
        let mut error = invalid(reason);
        if let Some(span) = span {
            error = error
                .with_detail("start", span.start.offset as i64)
                .with_detail("end", span.end.offset as i64);
        }
        return Err(error);
    }
    RegexBuilder::new(pattern)
        .size_limit(COMPILED_SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT)
        .build()
        .map_err(|error| match error {
            ::regex::Error::CompiledTooBig(limit) => invalid(format!(
                "the compiled pattern would exceed the size limit of {limit} bytes; use fewer or smaller repetitions"
            ))
            .with_detail("limit", limit as i64),
            other => invalid(other.to_string()),
        })
}

fn pattern(args: Args<'_>, patterns: &mut PatternCache) -> Result<Regex, ValueError> {
    patterns.compiled(args.text(0)?)
}

pub(super) fn matches(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    Ok(Value::Bool(pattern(args, patterns)?.is_match(args.text(1)?)))
}

pub(super) fn find(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    Ok(pattern(args, patterns)?.find(args.text(1)?).map_or(Value::Null, |m| Value::from(m.as_str())))
}

pub(super) fn find_all(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    let regex = pattern(args, patterns)?;
    args.list_result(strings(regex.find_iter(args.text(1)?).map(|m| m.as_str())))
}

/// The first match's groups: the whole match, then each group (`null` when it took no part).
pub(super) fn captures(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    let regex = pattern(args, patterns)?;
    let Some(found) = regex.captures(args.text(1)?) else { return Ok(Value::Null) };
    let groups = found.iter().map(|group| group.map_or(Value::Null, |m| Value::from(m.as_str()))).collect();
    args.list_result(groups)
}

/// Every match replaced by the expanded replacement; the result is built under the byte cap.
pub(super) fn replace(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    let regex = pattern(args, patterns)?;
    let (text, replacement) = (args.text(1)?, args.text(2)?);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for found in regex.captures_iter(text) {
        let Some(whole) = found.get(0) else { continue };
        out.push_str(&text[last..whole.start()]);
        found.expand(replacement, &mut out);
        last = whole.end();
        if out.len() > MAX_RESULT_BYTES {
            return Err(args.too_large("a string", out.len(), MAX_RESULT_BYTES));
        }
    }
    out.push_str(&text[last..]);
    args.string_result(out)
}

pub(super) fn split(args: Args<'_>, patterns: &mut PatternCache) -> Result<Value, ValueError> {
    let regex = pattern(args, patterns)?;
    args.list_result(strings(regex.split(args.text(1)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_compiles_each_pattern_once_and_keeps_the_newest() {
        let mut cache = PatternCache::default();
        cache.compiled("a+").expect("compiles");
        cache.compiled("a+").expect("compiles");
        assert_eq!(cache.entries.len(), 1);
        for n in 0..PATTERN_CACHE_ENTRIES {
            cache.compiled(&format!("x{{{n}}}")).expect("compiles");
        }
        assert_eq!(cache.entries.len(), PATTERN_CACHE_ENTRIES);
        assert!(cache.entries.iter().all(|(pattern, _)| &**pattern != "a+"), "the oldest is dropped");
        assert!(cache.compiled("(").is_err(), "a failing pattern is not cached");
        assert_eq!(cache.entries.len(), PATTERN_CACHE_ENTRIES);
    }
}
