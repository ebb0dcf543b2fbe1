//! Giving a rebound name's new value its own name (`n += 1`, `name = text.upper(name)`): a name
//! no token of the source spells, and the edits that make the statements after the rebinding,
//! up to the end of its block, read the new name.

use super::token::{Token, TokenKind};
use crate::diag::{Edit, Span};

/// `next_{name}`, or with a number when some token already spells that.
pub(crate) fn fresh_name(source: &str, tokens: &[Token], name: &str) -> String {
    let spelled = |candidate: &str| tokens.iter().any(|t| &source[t.span.range()] == candidate);
    let mut candidate = format!("next_{name}");
    let mut n = 2;
    while spelled(&candidate) {
        candidate = format!("next_{name}{n}");
        n += 1;
    }
    candidate
}

/// The edits renaming `name` to `renamed` where a token from byte `after` on reads it, until
/// the block holding `after` closes or `name` is declared again. Properties after `.` and object
/// keys are left alone; a shorthand `{ name }` becomes `{ name: renamed }`.
pub(crate) fn later_references(
    source: &str,
    tokens: &[Token],
    name: &str,
    renamed: &str,
    after: u32,
) -> Vec<Edit> {
    let start = tokens.iter().position(|t| t.span.start >= after).unwrap_or(tokens.len());
    let mut open: Vec<TokenKind> = Vec::new();
    let mut edits = Vec::new();
    for i in start..tokens.len() {
        let token = tokens[i];
        match token.kind {
            TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => open.push(token.kind),
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace if open.pop().is_none() => break,
            TokenKind::Ident if &source[token.span.range()] == name => {
                let previous = i.checked_sub(1).map(|p| tokens[p].kind);
                let next = tokens.get(i + 1).map(|t| t.kind);
                if open.is_empty() && token.line_break_before && next == Some(TokenKind::Eq) {
                    break;
                }
                let in_braces = open.last() == Some(&TokenKind::LBrace);
                if previous == Some(TokenKind::Dot) || (in_braces && next == Some(TokenKind::Colon)) {
                    continue;
                }
                let shorthand = in_braces
                    && matches!(previous, Some(TokenKind::LBrace | TokenKind::Comma))
                    && matches!(next, Some(TokenKind::RBrace | TokenKind::Comma));
                let replacement = if shorthand { format!("{name}: {renamed}") } else { renamed.to_owned() };
                edits.push(Edit { span: token.span, replacement });
            }
            _ => {}
        }
    }
    edits
}

/// The edits giving the value declared at `declared` (the name's span in the rebinding) its own
/// name, with the later reads.
pub(crate) fn rebinding_edits(
    source: &str,
    tokens: &[Token],
    declared: Span,
    value: Span,
) -> (String, Vec<Edit>) {
    let name = &source[declared.range()];
    let renamed = fresh_name(source, tokens, name);
    let mut edits = vec![Edit { span: declared, replacement: renamed.clone() }];
    edits.extend(later_references(source, tokens, name, &renamed, value.end));
    (renamed, edits)
}
