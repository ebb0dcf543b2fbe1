//! Sampling the nondeterministic intrinsics: the wall clock and the operating system's random
//! source. Only the shell calls this; the run core journals what it returns (spec §5.3).

use std::time::{SystemTime, UNIX_EPOCH};

use crate::diag::codes;
use crate::value::{Number, Value, ValueError};

use super::catalogue::SampledFunction;

impl SampledFunction {
    /// Reads the function's source once.
    pub fn sample(self) -> Result<Value, ValueError> {
        match self {
            SampledFunction::TimeNow => {
                let millis = match SystemTime::now().duration_since(UNIX_EPOCH) {
                    Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
                    Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
                };
                Ok(Value::Int(millis))
            }
            SampledFunction::NumberRandom => {
                let bits = getrandom::u64().map_err(|error| {
                    ValueError::new(
                        codes::SAMPLE_UNAVAILABLE,
                        format!("`number.random` found no random source: {error}"),
                    )
                })?;
                // The top 53 bits, scaled into [0, 1): every value is exact in binary64.
                let unit = (bits >> 11) as f64 / (1u64 << 53) as f64;
                Number::new(unit).map(Value::Number).ok_or_else(|| {
                    ValueError::new(codes::SAMPLE_UNAVAILABLE, "`number.random` produced a non-finite value")
                })
            }
        }
    }
}
