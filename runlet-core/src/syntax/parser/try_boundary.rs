//! `try`/`except` (Python) and `try { } catch (e) { }` (JavaScript) whose branches each end by
//! binding the same name, rewritten as that name bound to a `boundary { … } catch e { … }`.

use crate::diag::Applicability;
use crate::syntax::unicode::is_identifier;

/// The rewrite of the `try` construct `text` (which starts at `try` and whose continuation lines
/// carry `indent`), and how safely it applies; `None` when the construct has another shape.
pub(super) fn boundary_rewrite(text: &str, indent: &str) -> Option<(String, Applicability)> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.first()?.trim();
    let (clause, handler_end, error, applicability) = if header == "try:" {
        let clause = lines.iter().position(|l| l.trim_start().starts_with("except"))?;
        let at_base = |l: &&str| !l.trim().is_empty() && l.len() - l.trim_start().len() <= indent.len();
        if lines[clause + 1..].iter().any(at_base) {
            return None;
        }
        let (error, caught) = python_clause(lines[clause].trim())?;
        (clause, lines.len(), error, caught)
    } else if header == "try {" && lines.last()?.trim() == "}" {
        let clause = lines.iter().position(|l| l.trim_start().starts_with("} catch"))?;
        let catch = lines[clause].trim().strip_prefix("} catch")?.strip_suffix('{')?.trim();
        let binding = catch.strip_prefix('(').and_then(|c| c.strip_suffix(')')).unwrap_or(catch);
        let error = binding.split(':').next().unwrap_or_default().trim();
        let error = if error.is_empty() { "err" } else { error };
        (clause, lines.len() - 1, error, Applicability::MachineApplicable)
    } else {
        return None;
    };
    let (name, body) = returning(&lines[1..clause], None)?;
    let (_, handler) = returning(&lines[clause + 1..handler_end], Some(name))?;
    if !is_identifier(error) {
        return None;
    }
    let rewritten =
        format!("{name} = boundary {{\n{body}\n{indent}}} catch {error} {{\n{handler}\n{indent}}}");
    Some((rewritten, applicability))
}

/// The error name an `except …:` line binds (`err` when it binds none), and whether catching
/// every failure keeps its meaning (it does for a bare `except` or `except Exception`).
fn python_clause(line: &str) -> Option<(&str, Applicability)> {
    let clause = line.strip_prefix("except")?.strip_suffix(':')?.trim();
    let (caught, error) = clause.split_once(" as ").unwrap_or((clause, "err"));
    let everything = matches!(caught.trim(), "" | "Exception" | "BaseException");
    let applicability =
        if everything { Applicability::MachineApplicable } else { Applicability::MaybeIncorrect };
    Some((error.trim(), applicability))
}

/// A branch whose last line binds `name = value` (the same name as `expected`, when given):
/// the name and the branch with that line returning `value` instead.
fn returning<'t>(lines: &[&'t str], expected: Option<&str>) -> Option<(&'t str, String)> {
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    let last = lines[end];
    let (target, value) = last.trim().split_once('=')?;
    let (name, value) = (target.trim(), value.trim());
    let assigns = is_identifier(name) && !value.is_empty() && !value.starts_with('=');
    if !assigns || expected.is_some_and(|e| e != name) {
        return None;
    }
    let rebinds =
        lines[..end].iter().any(|l| l.trim().split_once('=').is_some_and(|(t, _)| t.trim() == name));
    if rebinds {
        return None;
    }
    let indent = &last[..last.len() - last.trim_start().len()];
    let mut branch: Vec<String> = lines[..end].iter().map(|l| (*l).to_owned()).collect();
    branch.push(format!("{indent}return {value}"));
    Some((name, branch.join("\n")))
}
