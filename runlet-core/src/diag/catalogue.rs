//! The explanation of every diagnostic code, built from `docs/diagnostics/RL*.md` at compile time.
//! Each entry has a `# RLnnnn: title` line, an explanation, and `## Wrong` / `## Right` examples.

use super::Code;

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

/// One catalogue entry: the code, its one-line title and the full Markdown text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub code: &'static str,
    pub title: &'static str,
    pub text: &'static str,
}

/// The entry for `code`, if the catalogue has one: a code such as `RL1017` or a code's symbolic
/// name such as `FOR_BODY_MISSING_RETURN` (both case-insensitive). The runtime's own tool error
/// codes (`TOOL_OUTPUT_SCHEMA_MISMATCH`) are found by their names this way.
pub fn lookup(code: &str) -> Option<Entry> {
    let code = code.trim().to_ascii_uppercase();
    let code = match super::codes::all().find(|declared| declared.name() == code) {
        Some(named) => named.to_string(),
        None => code,
    };
    ENTRIES.iter().find(|(c, _)| *c == code).map(|&(code, text)| entry(code, text))
}

/// The entry of a declared code.
pub fn of(code: Code) -> Option<Entry> {
    lookup(&code.to_string())
}

/// Every entry, ordered by code.
pub fn entries() -> impl Iterator<Item = Entry> {
    ENTRIES.iter().map(|&(code, text)| entry(code, text))
}

fn entry(code: &'static str, text: &'static str) -> Entry {
    let first = text.lines().next().unwrap_or_default();
    let title = first
        .strip_prefix("# ")
        .and_then(|t| t.strip_prefix(code))
        .and_then(|t| t.strip_prefix(':'))
        .map(str::trim)
        .unwrap_or_default();
    Entry { code, title, text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    #[test]
    fn every_declared_code_has_an_entry() {
        let missing: Vec<String> =
            codes::all().filter(|c| of(*c).is_none()).map(|c| format!("{c} {}", c.name())).collect();
        assert!(missing.is_empty(), "codes without docs/diagnostics entries: {missing:?}");
    }

    #[test]
    fn codes_are_found_by_number_or_name() {
        assert_eq!(lookup("rl1017").map(|e| e.code), Some("RL1017"));
        assert_eq!(lookup(" for_body_missing_return ").map(|e| e.code), Some("RL1017"));
        assert_eq!(lookup("TOOL_OUTPUT_SCHEMA_MISMATCH").map(|e| e.code), Some("RL6104"));
        assert_eq!(lookup("TOOL_INPUT_SCHEMA_MISMATCH").map(|e| e.code), Some("RL6103"));
        assert_eq!(lookup("RATE_LIMITED"), None);
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = codes::all().map(Code::name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "two codes share a name");
    }

    #[test]
    fn every_entry_is_a_declared_code_and_well_formed() {
        for entry in entries() {
            assert!(Code::parse(entry.code).is_some(), "{} has an entry but is not declared", entry.code);
            assert!(!entry.title.is_empty(), "{}: first line must be `# {}: title`", entry.code, entry.code);
            for section in ["\n## Wrong\n", "\n## Right\n"] {
                assert!(entry.text.contains(section), "{}: missing section {section:?}", entry.code);
            }
        }
    }
}
