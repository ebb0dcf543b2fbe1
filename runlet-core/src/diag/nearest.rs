//! Edit distances for "did you mean" suggestions, bounded so that no input makes them slow: the
//! Damerau-Levenshtein distance costs the product of the two spellings' lengths, and sources,
//! registries, MCP servers' tool lists and fixtures can all hold very long names.

/// Spellings longer than this (in scalars) are never compared letter by letter: a misspelling
/// that long is not one a suggestion helps with, and comparing two of them would cost the
/// product of their lengths.
pub const LONGEST_COMPARED: usize = 128;

/// The Damerau-Levenshtein distance between `a` and `b` (over scalars), or `None` when either
/// is longer than [`LONGEST_COMPARED`] scalars.
pub fn distance(a: &str, b: &str) -> Option<usize> {
    let compared = |text: &str| text.chars().nth(LONGEST_COMPARED).is_none();
    (compared(a) && compared(b)).then(|| strsim::damerau_levenshtein(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_spellings_are_not_compared() {
        assert_eq!(distance("emali", "email"), Some(1));
        let longest = "a".repeat(LONGEST_COMPARED);
        assert_eq!(distance(&longest, &format!("{longest}b")), None);
        assert_eq!(distance(&longest, "a"), Some(LONGEST_COMPARED - 1));
        // Counted in scalars, not bytes.
        assert!(distance(&"é".repeat(LONGEST_COMPARED), "e").is_some());
    }
}
