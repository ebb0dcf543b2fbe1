//! What a viewer may see (spec §6.2): a host-supplied `ViewPolicy` authorizing value paths and
//! metadata separately, and the redacted previews built under it before anything leaves the API.

use crate::value::{Labelled, Labels, Sensitivity, Value, to_presentation_json};

/// Authorizes value paths and metadata separately. The default shows public values and public
/// metadata only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewPolicy {
    /// Value paths labelled at most this are shown; stronger paths read `"<redacted:…>"`.
    pub values: Sensitivity,
    /// Metadata derived from values (tool error messages) is shown when the label it inherits is
    /// at most this; otherwise it is left out.
    pub metadata: Sensitivity,
    /// Value previews are cut to this many characters.
    pub preview_chars: usize,
}

impl Default for ViewPolicy {
    fn default() -> Self {
        ViewPolicy { values: Sensitivity::Public, metadata: Sensitivity::Public, preview_chars: 200 }
    }
}

impl ViewPolicy {
    /// A policy cleared for everything (operators with full access).
    pub fn everything() -> ViewPolicy {
        ViewPolicy { values: Sensitivity::Secret, metadata: Sensitivity::Secret, ..ViewPolicy::default() }
    }

    /// The value as this viewer may see it: presentation JSON with every path labelled above
    /// `values` redacted, cut to `preview_chars`.
    pub fn preview(&self, value: &Value, labels: &Labels) -> String {
        let shown = Labelled::new(value.clone(), labels.clone()).redacted(self.values);
        let text = to_presentation_json(&shown).unwrap_or_else(|error| format!("({})", error.message()));
        match text.char_indices().nth(self.preview_chars) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    }

    /// Whether metadata inheriting `label` may be shown.
    pub fn shows_metadata(&self, label: Sensitivity) -> bool {
        label <= self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Segment, parse_json};

    #[test]
    fn the_default_view_redacts_sensitive_and_secret_paths() {
        let value = parse_json(r#"{"id": "c1", "token": "hunter2"}"#).expect("json");
        let labels = Labels::at_path(&[Segment::Key("token".into())], Sensitivity::Secret);
        let default = ViewPolicy::default();
        assert_eq!(default.preview(&value, &labels), r#"{"id":"c1","token":"<redacted:secret>"}"#);
        assert_eq!(ViewPolicy::everything().preview(&value, &labels), r#"{"id":"c1","token":"hunter2"}"#);
        assert!(default.shows_metadata(Sensitivity::Public));
        assert!(!default.shows_metadata(Sensitivity::Sensitive));
    }

    #[test]
    fn previews_are_cut_at_a_character_boundary() {
        let view = ViewPolicy { preview_chars: 3, ..ViewPolicy::default() };
        assert_eq!(view.preview(&Value::from("héllo"), &Labels::public()), "\"hé…");
    }
}
