//! `ValueError`: the one error type of value operations — a stable code, a message, structured
//! details as a value, and the sensitivity of the data those were derived from.

use std::fmt;
use std::sync::Arc;

use super::model::{Object, Value};
use super::sensitivity::Sensitivity;
use crate::diag::Code;

/// A failed value operation. Operators, projections, conversions and the readers of untrusted
/// input return this instead of panicking.
///
/// The message and the details may quote data from the operands (an index, a missing key).
/// `sensitivity` is the strongest label of the operands the error was derived from; use
/// [`ValueError::redacted`] before showing the error to a viewer cleared for less.
#[derive(Clone, PartialEq)]
pub struct ValueError {
    code: Code,
    message: String,
    details: Object,
    sensitivity: Sensitivity,
}

impl ValueError {
    pub fn new(code: Code, message: impl Into<String>) -> ValueError {
        ValueError {
            code,
            message: message.into(),
            details: Object::empty(),
            sensitivity: Sensitivity::Public,
        }
    }

    /// Adds (or replaces) one entry of the details object. Details are shallow (scalars and
    /// lists of scalars), far below the depth cap, which is why this stays inside the crate.
    pub(crate) fn with_detail(mut self, key: &str, value: impl Into<Value>) -> ValueError {
        let entry: Vec<(Arc<str>, Value)> = vec![(key.into(), value.into())];
        if let Ok(entry) = Object::from_pairs(entry) {
            self.details = self.details.merge(&entry);
        }
        self
    }

    /// Raises the error's sensitivity to at least `level`.
    pub fn with_sensitivity(mut self, level: Sensitivity) -> ValueError {
        self.sensitivity = self.sensitivity.max(level);
        self
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Structured details, e.g. `{"index": -4, "normalized": -1, "length": 3}` for `RL5205`.
    pub fn details(&self) -> &Object {
        &self.details
    }

    pub fn sensitivity(&self) -> Sensitivity {
        self.sensitivity
    }

    /// The error as a viewer cleared up to `allowed` may see it: unchanged when its sensitivity
    /// is within `allowed`, otherwise with the message reduced to the code's name and the details
    /// replaced by `{"redacted": "<label>"}`.
    pub fn redacted(&self, allowed: Sensitivity) -> ValueError {
        if self.sensitivity <= allowed {
            return self.clone();
        }
        ValueError::new(self.code, format!("{} (details redacted)", self.code.name()))
            .with_detail("redacted", self.sensitivity.name())
            .with_sensitivity(self.sensitivity)
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl fmt::Debug for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValueError")
            .field("code", &format_args!("{} {}", self.code, self.code.name()))
            .field("message", &self.message)
            .field("details", &self.details)
            .field("sensitivity", &self.sensitivity)
            .finish()
    }
}

impl std::error::Error for ValueError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    #[test]
    fn redaction_hides_message_and_details_above_the_clearance() {
        let error = ValueError::new(codes::KEY_NOT_FOUND, "key `token-123` not found")
            .with_detail("key", "token-123")
            .with_sensitivity(Sensitivity::Secret);
        assert_eq!(error.redacted(Sensitivity::Secret), error);
        let hidden = error.redacted(Sensitivity::Sensitive);
        assert_eq!(hidden.code(), codes::KEY_NOT_FOUND);
        assert!(!hidden.message().contains("token"));
        assert_eq!(hidden.details().get("redacted"), Some(&Value::from("secret")));
        assert_eq!(hidden.details().get("key"), None);
        assert_eq!(hidden.sensitivity(), Sensitivity::Secret);
    }
}
