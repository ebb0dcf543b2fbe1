//! The Unicode rules names and strings are held to: identifiers and registry names compare in
//! Normalization Form C, names that differ only by default-ignorable code points (invisible
//! characters such as U+200D ZERO WIDTH JOINER) are told apart by their [`skeleton`], and the
//! bidirectional controls that can make source read differently from how it runs are known.

use std::borrow::Cow;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};

/// `text` in Normalization Form C, borrowed when it already is (as nearly every name is).
pub fn nfc(text: &str) -> Cow<'_, str> {
    match is_nfc_quick(text.chars()) {
        IsNormalized::Yes => Cow::Borrowed(text),
        IsNormalized::No | IsNormalized::Maybe => {
            let normalized: String = text.nfc().collect();
            if normalized == text { Cow::Borrowed(text) } else { Cow::Owned(normalized) }
        }
    }
}

/// `text` in NFC without its default-ignorable code points: two names with the same skeleton
/// look the same.
pub fn skeleton(text: &str) -> String {
    nfc(text).chars().filter(|&c| !is_default_ignorable(c)).collect()
}

/// `text` with each default-ignorable code point written as `\u{…}`, so a message shows it.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_default_ignorable(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Unicode's `Default_Ignorable_Code_Point` property (DerivedCoreProperties.txt): characters
/// that render as nothing unless a font chooses to show them.
pub fn is_default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}'..='\u{1160}' | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// The bidirectional formatting characters (UAX #9) that reorder how text around them displays:
/// embeddings and overrides U+202A–U+202E, isolates U+2066–U+2069, and the marks U+200E, U+200F
/// and U+061C.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// A Unicode XID identifier (a leading `_` is allowed), as the lexer reads them.
pub fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c == '_' || unicode_ident::is_xid_start(c))
        && chars.all(unicode_ident::is_xid_continue)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_in_nfc() {
        assert!(matches!(nfc("café"), Cow::Borrowed("café")));
        assert_eq!(nfc("cafe\u{301}"), "caf\u{e9}");
        assert_eq!(nfc("Å"), "\u{c5}", "the angstrom sign is a canonical singleton");
    }

    #[test]
    fn skeletons_drop_invisible_characters() {
        assert_eq!(skeleton("a\u{200D}.b"), "a.b");
        assert_eq!(skeleton("a\u{FE0F}b\u{E0041}"), "ab");
        assert_eq!(skeleton("cafe\u{301}"), "café");
        assert_eq!(visible("a\u{200D}.b"), "a\\u{200D}.b");
        assert!(!is_default_ignorable('a') && !is_default_ignorable('\u{301}'));
    }

    #[test]
    fn bidi_controls_are_a_part_of_the_ignorables() {
        let controls = ['\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}'];
        for c in controls {
            assert!(is_bidi_control(c) && is_default_ignorable(c), "{c:?}");
        }
        assert!(!is_bidi_control('\u{200D}'));
    }
}
