//! What a runtime's event consumers may see (spec §6.2): the host's `runlet_view_policy` and its
//! reading into the engine's `ViewPolicy`, which redacts every event before it crosses the ABI.

use runlet::observe::ViewPolicy;
use runlet::value::Sensitivity;

use crate::error::{Error, RUNLET_ERR_INVALID_ARGUMENT};

/// Public values and metadata: the default, and the zero value.
pub const RUNLET_SENSITIVITY_PUBLIC: u32 = 0;
/// Values or metadata labelled sensitive by the tool schemas.
pub const RUNLET_SENSITIVITY_SENSITIVE: u32 = 1;
/// Values or metadata labelled secret by the tool schemas.
pub const RUNLET_SENSITIVITY_SECRET: u32 = 2;

/// What listeners and pull queues may see of a run's events; zeroed, public only.
///
/// - `values`: the strongest label (`RUNLET_SENSITIVITY_*`) of value paths shown in previews;
///   stronger paths read `"<redacted:LABEL>"`.
/// - `metadata`: the strongest label of metadata derived from values (tool error messages) that
///   is shown; stronger metadata is left out.
/// - `preview_chars`: value previews are cut to this many characters; 0 for 200.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct runlet_view_policy {
    pub values: u32,
    pub metadata: u32,
    pub preview_chars: u32,
}

fn sensitivity(field: &str, level: u32) -> Result<Sensitivity, Error> {
    match level {
        RUNLET_SENSITIVITY_PUBLIC => Ok(Sensitivity::Public),
        RUNLET_SENSITIVITY_SENSITIVE => Ok(Sensitivity::Sensitive),
        RUNLET_SENSITIVITY_SECRET => Ok(Sensitivity::Secret),
        other => Err(Error::new(
            RUNLET_ERR_INVALID_ARGUMENT,
            format!("`view.{field}` is {other}; it must be one of the RUNLET_SENSITIVITY_* values (0, 1, 2)"),
        )),
    }
}

/// The engine's policy for `view`, refusing unknown labels.
pub(crate) fn view_policy(view: runlet_view_policy) -> Result<ViewPolicy, Error> {
    let mut policy = ViewPolicy {
        values: sensitivity("values", view.values)?,
        metadata: sensitivity("metadata", view.metadata)?,
        ..ViewPolicy::default()
    };
    if view.preview_chars != 0 {
        policy.preview_chars = view.preview_chars as usize;
    }
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_is_the_default_view_and_labels_map_in_order() {
        assert_eq!(view_policy(runlet_view_policy::default()), Ok(ViewPolicy::default()));
        let everything = runlet_view_policy {
            values: RUNLET_SENSITIVITY_SECRET,
            metadata: RUNLET_SENSITIVITY_SECRET,
            preview_chars: 0,
        };
        assert_eq!(view_policy(everything), Ok(ViewPolicy::everything()));
        let short = runlet_view_policy {
            values: RUNLET_SENSITIVITY_SENSITIVE,
            preview_chars: 12,
            ..Default::default()
        };
        let policy = view_policy(short).expect("valid");
        assert_eq!(
            (policy.values, policy.metadata, policy.preview_chars),
            (Sensitivity::Sensitive, Sensitivity::Public, 12)
        );
    }

    #[test]
    fn unknown_labels_are_refused() {
        let bad = runlet_view_policy { metadata: 3, ..Default::default() };
        let error = view_policy(bad).expect_err("3 is no label");
        assert_eq!(error.code(), RUNLET_ERR_INVALID_ARGUMENT);
    }
}
