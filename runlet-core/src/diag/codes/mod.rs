//! Stable diagnostic codes. Each range lives in its own file (spec §9.1); a code is declared once,
//! never reused, and must have a catalogue entry under `docs/diagnostics/`.

use std::fmt;

/// A stable diagnostic code such as `RL1017`, with its SCREAMING_SNAKE name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    number: u16,
    name: &'static str,
}

impl Code {
    pub const fn new(number: u16, name: &'static str) -> Self {
        Code { number, name }
    }

    pub const fn number(self) -> u16 {
        self.number
    }

    /// The symbolic name, such as `NUMERIC_OVERFLOW`.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// `text` without this code before it (`RL7301: run …` → `run …`): the message of an
    /// error whose text names its code, for a place that shows the code beside it.
    pub fn unprefixed(self, text: &str) -> &str {
        text.strip_prefix(&format!("{self}: ")).unwrap_or(text)
    }

    /// Looks a code up by its text form (`RL1017`, case-insensitive).
    pub fn parse(text: &str) -> Option<Code> {
        let digits = text.strip_prefix("RL").or_else(|| text.strip_prefix("rl"))?;
        let number: u16 = digits.parse().ok()?;
        all().find(|c| c.number == number)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RL{:04}", self.number)
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Declares the codes of one range as constants plus that range's `ALL` list.
macro_rules! declare_codes {
    (range $range:ident; $( $(#[$doc:meta])* $name:ident = $number:literal, )*) => {
        $( $(#[$doc])* pub const $name: $crate::diag::Code = $crate::diag::Code::new($number, stringify!($name)); )*
        /// Every code of this range, in declaration order.
        pub const $range: &[$crate::diag::Code] = &[$($name),*];
    };
}

pub mod host;
pub mod limits;
pub mod persistence;
pub mod policy;
pub mod runtime;
pub mod syntax;
pub mod tool;
pub mod types;

pub use host::*;
pub use limits::*;
pub use persistence::*;
pub use policy::*;
pub use runtime::*;
pub use syntax::*;
pub use tool::*;
pub use types::*;

/// Every declared code, ordered by number.
pub fn all() -> impl Iterator<Item = Code> {
    let mut codes: Vec<Code> = [
        syntax::SYNTAX,
        types::TYPES,
        policy::POLICY,
        limits::LIMITS,
        runtime::RUNTIME,
        tool::TOOL,
        persistence::PERSISTENCE,
        host::HOST,
    ]
    .concat();
    codes.sort();
    codes.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_and_in_their_range() {
        let ranges = [
            (syntax::SYNTAX, 1),
            (types::TYPES, 2),
            (policy::POLICY, 3),
            (limits::LIMITS, 4),
            (runtime::RUNTIME, 5),
            (tool::TOOL, 6),
            (persistence::PERSISTENCE, 7),
            (host::HOST, 8),
        ];
        for (codes, thousand) in ranges {
            for code in codes {
                assert_eq!(code.number() / 1000, thousand, "{code} ({}) is in the wrong file", code.name());
            }
        }
        let mut numbers: Vec<u16> = all().map(Code::number).collect();
        let count = numbers.len();
        numbers.dedup();
        assert_eq!(numbers.len(), count, "a code number is declared twice");
    }

    #[test]
    fn parse_round_trips_display() {
        for code in all() {
            assert_eq!(Code::parse(&code.to_string()), Some(code));
        }
        assert_eq!(Code::parse("RL"), None);
        assert_eq!(Code::parse("XY1000"), None);
    }
}
