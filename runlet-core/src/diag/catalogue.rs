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

/// The entry for `code` (`RL1017`, case-insensitive), if the catalogue has one.
pub fn lookup(code: &str) -> Option<Entry> {
    let code = code.trim().to_ascii_uppercase();
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
