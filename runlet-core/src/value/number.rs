//! The finite binary64 `Number` of the portable value domain and its canonical text form
//! (RFC 8785 §3.2.2.3, i.e. ECMAScript `Number::toString`, via `ryu-js`).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A finite IEEE-754 binary64 number. Negative zero is normalized to positive zero on
/// construction, so two `Number`s are equal exactly when their bit patterns are equal, and the
/// type has a total order.
#[derive(Clone, Copy, PartialEq)]
pub struct Number(f64);

impl Number {
    /// Positive zero.
    pub const ZERO: Number = Number(0.0);

    /// `Some` for every finite `value` (with `-0.0` turned into `0.0`), `None` for NaN and the
    /// infinities, which are not portable values.
    pub fn new(value: f64) -> Option<Number> {
        if !value.is_finite() {
            return None;
        }
        // `-0.0 == 0.0`, so this replaces negative zero and leaves every other value alone.
        Some(Number(if value == 0.0 { 0.0 } else { value }))
    }

    /// The exact binary64 value of `value`, or `None` when `value` has no exact binary64 form
    /// (its magnitude needs more than 53 significant bits). This is the only Integer → Number
    /// widening Runlet performs.
    pub fn from_i64_exact(value: i64) -> Option<Number> {
        let widened = value as f64;
        // `widened` is finite; the round trip back to i64 saturates at the i64 bounds, so the
        // one value that would compare equal after saturation (2^63) is excluded explicitly.
        let exact = widened != 9_223_372_036_854_775_808.0 && widened as i64 == value;
        exact.then_some(Number(widened))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    /// The canonical text: shortest round-tripping decimal with the ECMAScript thresholds,
    /// e.g. `0.1`, `1e+21`, `5e-324`, `100`.
    pub fn canonical_text(self, buffer: &mut ryu_js::Buffer) -> &str {
        buffer.format_finite(self.0)
    }

    /// Compares the exact mathematical values of an Integer and a Number, without rounding
    /// either side.
    pub fn cmp_integer(integer: i64, number: Number) -> Ordering {
        const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
        let n = number.0;
        if n >= TWO_POW_63 {
            return Ordering::Less;
        }
        if n < -TWO_POW_63 {
            return Ordering::Greater;
        }
        let whole = n.trunc();
        // `whole` lies in [-2^63, 2^63) and is integral, so the cast is exact.
        match integer.cmp(&(whole as i64)) {
            Ordering::Equal => whole.partial_cmp(&n).unwrap_or(Ordering::Equal),
            unequal => unequal,
        }
    }
}

impl Eq for Number {}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        // Both are finite and neither is negative zero, so IEEE order is total here.
        self.0.total_cmp(&other.0)
    }
}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.canonical_text(&mut ryu_js::Buffer::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: f64) -> String {
        Number::new(value).expect("finite").to_string()
    }

    #[test]
    fn rejects_non_finite_and_normalizes_negative_zero() {
        assert!(Number::new(f64::NAN).is_none());
        assert!(Number::new(f64::INFINITY).is_none());
        assert!(Number::new(f64::NEG_INFINITY).is_none());
        assert_eq!(Number::new(-0.0).expect("finite").get().to_bits(), 0);
        assert_eq!(Number::new(-0.0), Some(Number::ZERO));
    }

    /// Examples from RFC 8785 appendix B and ECMAScript `Number::toString`.
    #[test]
    fn canonical_text_follows_ecmascript() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, expected) in cases {
            assert_eq!(text(f64::from_bits(bits)), expected, "bits {bits:#018x}");
        }
        assert_eq!(text(0.1), "0.1");
        assert_eq!(text(1e21), "1e+21");
        assert_eq!(text(1e-7), "1e-7");
        assert_eq!(text(100.0), "100");
        assert_eq!(text(-1.5), "-1.5");
    }

    #[test]
    fn exact_widening_only() {
        assert_eq!(Number::from_i64_exact(3).map(Number::get), Some(3.0));
        assert_eq!(Number::from_i64_exact(1 << 53).map(Number::get), Some(9007199254740992.0));
        assert!(Number::from_i64_exact((1 << 53) + 1).is_none());
        assert!(Number::from_i64_exact(i64::MAX).is_none());
        assert_eq!(Number::from_i64_exact(i64::MIN).map(Number::get), Some(-9223372036854775808.0));
    }

    #[test]
    fn integer_comparison_is_exact() {
        let n = |v: f64| Number::new(v).expect("finite");
        assert_eq!(Number::cmp_integer(1, n(1.0)), Ordering::Equal);
        assert_eq!(Number::cmp_integer(1, n(1.5)), Ordering::Less);
        assert_eq!(Number::cmp_integer(-1, n(-1.5)), Ordering::Greater);
        assert_eq!(Number::cmp_integer(-2, n(-1.5)), Ordering::Less);
        assert_eq!(Number::cmp_integer(i64::MAX, n(9223372036854775808.0)), Ordering::Less);
        assert_eq!(Number::cmp_integer(i64::MIN, n(-9223372036854775808.0)), Ordering::Equal);
        assert_eq!(Number::cmp_integer(i64::MIN, n(-1e300)), Ordering::Greater);
        assert_eq!(Number::cmp_integer((1 << 53) + 1, n(9007199254740992.0)), Ordering::Greater);
    }
}
