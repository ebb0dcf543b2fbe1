//! Names the registry hands to source code: dotted tool paths (`crm.customer`), host input and
//! parameter identifiers, and the reserved words that can never be a registry root (spec §2.1).

use std::fmt;
use std::sync::Arc;

/// The Unicode rules names are held to (NFC, invisible characters), for the layers above that
/// name tools and inputs.
pub use crate::syntax::unicode::{is_default_ignorable, is_identifier, nfc, skeleton, visible};

/// True for the words the grammar reserves (spec §2.1 plus `skip`, `fold` and `fail`): they
/// cannot name a registry root or a namespace segment a program could reach.
pub fn is_reserved(word: &str) -> bool {
    crate::syntax::token::Keyword::from_word(word).is_some()
}

/// `text` made an identifier: every character that cannot continue one becomes `_` (so `.` and
/// `-` do), and a leading `_` is added when the result cannot start one (a digit, or nothing).
/// Identifiers map to themselves.
pub fn identifier_from(text: &str) -> String {
    let mut fixed: String =
        text.chars().map(|c| if unicode_ident::is_xid_continue(c) { c } else { '_' }).collect();
    if !is_identifier(&fixed) {
        fixed.insert(0, '_');
    }
    fixed
}

/// A registry path such as `crm.customer`: one or more identifiers joined by dots, whose first
/// segment (the root) is not a reserved word, in Unicode Normalization Form C (as the lexer reads
/// identifiers), so an NFC and an NFD spelling are the same name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedName(Arc<str>);

/// Why text is not a [`QualifiedName`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    EmptySegment,
    NotIdentifier { segment: String },
    ReservedRoot { root: String },
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::EmptySegment => f.write_str("a segment of the dotted path is empty"),
            NameError::NotIdentifier { segment } => write!(f, "`{segment}` is not an identifier"),
            NameError::ReservedRoot { root } => write!(f, "the root `{root}` is a reserved word"),
        }
    }
}

impl QualifiedName {
    pub fn parse(text: &str) -> Result<QualifiedName, NameError> {
        let text = nfc(text);
        for (i, segment) in text.split('.').enumerate() {
            if segment.is_empty() {
                return Err(NameError::EmptySegment);
            }
            if !is_identifier(segment) {
                return Err(NameError::NotIdentifier { segment: segment.to_owned() });
            }
            if i == 0 && is_reserved(segment) {
                return Err(NameError::ReservedRoot { root: segment.to_owned() });
            }
        }
        Ok(QualifiedName(Arc::from(text.as_ref())))
    }

    /// The nearest valid name: characters outside identifiers become `_`, empty segments are
    /// dropped, a segment that cannot start an identifier gets a leading `_`, and a reserved root
    /// gets a trailing `_`. `None` when nothing of the text is usable.
    pub fn suggest(text: &str) -> Option<QualifiedName> {
        let mut segments: Vec<String> =
            text.split('.').filter(|s| !s.is_empty()).map(identifier_from).collect();
        if let Some(root) = segments.first_mut().filter(|root| is_reserved(root)) {
            root.push('_');
        }
        QualifiedName::parse(&segments.join(".")).ok()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name's text, shared rather than copied.
    pub fn shared(&self) -> Arc<str> {
        Arc::clone(&self.0)
    }

    pub fn segments(&self) -> impl Iterator<Item = &str> {
        self.0.split('.')
    }

    pub fn root(&self) -> &str {
        self.0.split('.').next().unwrap_or_default()
    }
}

impl fmt::Display for QualifiedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_dotted_identifiers() {
        let name = QualifiedName::parse("crm.customer.limit").expect("valid");
        assert_eq!(name.root(), "crm");
        assert_eq!(name.segments().collect::<Vec<_>>(), ["crm", "customer", "limit"]);
        assert_eq!(QualifiedName::parse("a..b"), Err(NameError::EmptySegment));
        assert_eq!(QualifiedName::parse("if.x"), Err(NameError::ReservedRoot { root: "if".into() }));
        assert_eq!(
            QualifiedName::parse("resolve-library-id"),
            Err(NameError::NotIdentifier { segment: "resolve-library-id".into() })
        );
    }

    #[test]
    fn names_are_kept_in_nfc() {
        let decomposed = QualifiedName::parse("cafe\u{301}.menu").expect("valid");
        assert_eq!(decomposed, QualifiedName::parse("caf\u{e9}.menu").expect("valid"));
        assert_eq!(decomposed.root(), "caf\u{e9}");
    }

    #[test]
    fn suggests_a_valid_spelling() {
        let suggest = |t: &str| QualifiedName::suggest(t).map(|n| n.to_string());
        assert_eq!(suggest("resolve-library-id").as_deref(), Some("resolve_library_id"));
        assert_eq!(suggest("1password..get").as_deref(), Some("_1password.get"));
        assert_eq!(suggest("for.each").as_deref(), Some("for_.each"));
        assert_eq!(suggest("..."), None);
    }
}
