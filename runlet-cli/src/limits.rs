//! `--limit KEY=N`, repeatable: the limits of the one table (`runlet::engine::LimitKey`), for
//! `check` (its compile-time keys) and the commands that run programs.

use runlet::engine::Limits;

use crate::failure::Failure;

/// The limits `assignments` set, each `KEY=N` checked (`RL8501` names the keys there are).
pub fn parse_limits(assignments: &[String]) -> Result<Limits, Failure> {
    let mut limits = Limits::new();
    for assignment in assignments {
        let (key, cap) = Limits::parse_assignment(assignment)
            .map_err(|error| Failure::new(error.code(), format!("`--limit {assignment}`: {error}")))?;
        limits = limits.with(key, cap);
    }
    Ok(limits)
}
