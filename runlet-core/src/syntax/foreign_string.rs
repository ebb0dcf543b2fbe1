//! Strings in other languages' quotes ('single', `template ${x}`, f"format {x}", “curly”,
//! triple quotes): the diagnostic with its conversion to Runlet's double-quoted form (line
//! breaks joined as `\n`), and the value used for recovery.

use super::escape::{decode_string, quote_string};
use super::token::ForeignToken;
use crate::diag::{Diagnostic, Fix, Span, codes};

/// The `RL1038` diagnostic for a foreign string token `text` at `span`. The fix re-quotes the
/// text; interpolations become `+` joins, which need review (the joined values must be strings).
pub(crate) fn diagnostic(kind: ForeignToken, span: Span, text: &str) -> Diagnostic {
    let (message, rewritten) = match kind {
        ForeignToken::TemplateString => {
            ("Runlet has no template strings; strings use double quotes", joined(inner(kind, text), "${"))
        }
        ForeignToken::FormatString => {
            ("Runlet has no f-strings; strings use double quotes", joined(&decode_string(&text[1..]).0, "{"))
        }
        ForeignToken::TripleQuotedString => (
            "Runlet has no triple-quoted strings: a string is one line in double quotes, `\\n` for each line break",
            Some((quote_string(&value(kind, text)), false)),
        ),
        _ => ("strings use double quotes in Runlet", Some((quote_string(&value(kind, text)), false))),
    };
    let diagnostic = Diagnostic::error(codes::FOREIGN_STRING, span, message);
    match rewritten {
        Some((rewritten, false)) => {
            diagnostic.with_fix(Fix::machine(format!("write {rewritten}"), span, rewritten))
        }
        Some((rewritten, true)) => diagnostic
            .with_help("join text and values with `+`")
            .with_fix(Fix::suggest(format!("write {rewritten}"), span, rewritten)),
        None => diagnostic.with_help("join text and values with `+`: `\"hello \" + name`"),
    }
}

/// The string the literal most likely means, so that parsing can go on.
pub(crate) fn value(kind: ForeignToken, text: &str) -> String {
    match kind {
        ForeignToken::SingleQuotedString => {
            let mut out = String::with_capacity(text.len());
            let mut chars = inner(kind, text).chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('\\', Some('\'')) => {
                        out.push('\'');
                        chars.next();
                    }
                    ('\\', Some(next)) => {
                        let (decoded, _) = decode_string(&format!("\"\\{next}\""));
                        out.push_str(&decoded);
                        chars.next();
                    }
                    (c, _) => out.push(c),
                }
            }
            out
        }
        ForeignToken::FormatString => decode_string(&text[1..]).0,
        _ => inner(kind, text).to_owned(),
    }
}

/// The text between the quotes.
fn inner(kind: ForeignToken, text: &str) -> &str {
    let open = match kind {
        ForeignToken::FormatString => 2,
        ForeignToken::TripleQuotedString => 3,
        _ => text.chars().next().map_or(0, char::len_utf8),
    };
    let close = match kind {
        ForeignToken::TripleQuotedString => 3,
        _ => text.chars().next_back().map_or(0, char::len_utf8),
    };
    text.get(open..text.len().saturating_sub(close)).unwrap_or_default()
}

/// Splits `text` at `marker … }` interpolations into quoted pieces and expressions joined with
/// `+`; the flag says whether there was any interpolation. `None` when an interpolation uses a
/// format spec or escaped braces, which have no Runlet spelling.
fn joined(text: &str, marker: &str) -> Option<(String, bool)> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(marker) {
        let after = &rest[open + marker.len()..];
        let close = after.find('}')?;
        let expression = after[..close].trim();
        if expression.is_empty() || expression.contains(['{', ':', '!']) {
            return None;
        }
        if open > 0 {
            parts.push(quote_string(&rest[..open]));
        }
        parts.push(expression.to_owned());
        rest = &after[close + 1..];
    }
    if rest.contains(['{', '}']) && marker == "{" {
        return None;
    }
    let interpolated = !parts.is_empty();
    if !rest.is_empty() || parts.is_empty() {
        parts.push(quote_string(rest));
    }
    Some((parts.join(" + "), interpolated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(kind: ForeignToken, text: &str) -> Option<String> {
        diagnostic(kind, Span::new(0, text.len() as u32), text)
            .fixes
            .first()
            .map(|f| f.edits[0].replacement.clone())
    }

    #[test]
    fn conversions() {
        assert_eq!(
            fix(ForeignToken::SingleQuotedString, r#"'it\'s "x"'"#).as_deref(),
            Some(r#""it's \"x\"""#)
        );
        assert_eq!(
            fix(ForeignToken::TemplateString, "`hi ${name}!`").as_deref(),
            Some(r#""hi " + name + "!""#)
        );
        assert_eq!(fix(ForeignToken::TemplateString, "`plain`").as_deref(), Some(r#""plain""#));
        assert_eq!(fix(ForeignToken::FormatString, r#"f"{a}-{b.c}""#).as_deref(), Some(r#"a + "-" + b.c"#));
        assert_eq!(fix(ForeignToken::FormatString, r#"f"{x:.2f}""#), None);
        assert_eq!(fix(ForeignToken::CurlyQuotedString, "“hello”").as_deref(), Some(r#""hello""#));
        assert_eq!(
            fix(ForeignToken::TripleQuotedString, "'''Hello,\nthe \"end\"'''").as_deref(),
            Some(r#""Hello,\nthe \"end\"""#)
        );
    }

    #[test]
    fn values() {
        assert_eq!(value(ForeignToken::SingleQuotedString, r"'a\'b\n'"), "a'b\n");
        assert_eq!(value(ForeignToken::FormatString, r#"f"x\ty""#), "x\ty");
        assert_eq!(value(ForeignToken::CurlyQuotedString, "‘q’"), "q");
    }
}
