//! The number rule: a number's text to Int32, Int64, Decimal128 or Double.
//!
//! Applied to a JSON literal's exact source text, and to a DynamoDB
//! number's canonical text:
//!
//! | literal                                        | BSON                          |
//! |------------------------------------------------|-------------------------------|
//! | integer (no `.`, no exponent) in `i32`         | Int32 (`-0` is Int32 0)       |
//! | integer in `i64`                               | Int64                         |
//! | larger integer, at most 34 significant digits  | Decimal128, exact             |
//! | larger integer, more digits                    | Double (nearest)              |
//! | anything with `.` or an exponent               | Double (`1.0` stays a double) |
//!
//! A number whose magnitude a double cannot hold (`1e400`) is an error.

use std::fmt;
use std::str::FromStr;

use bson::{Bson, Decimal128};

use super::{excerpt, quoted};

/// Most significant digits of a Decimal128 coefficient.
pub const MAX_DECIMAL128_DIGITS: usize = 34;

/// Why a number's text has no BSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// The text is not a number literal.
    NotANumber { text: String },
    /// A double cannot hold the number's magnitude.
    OutOfRange { text: String },
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::NotANumber { text } => write!(f, "{} is not a number", quoted(text)),
            NumberError::OutOfRange { text } => {
                write!(f, "number {} is out of range for a BSON double", excerpt(text))
            }
        }
    }
}

impl std::error::Error for NumberError {}

/// A number's text to BSON by the number rule (see the module doc).
/// Errors for text that is not a number, or a magnitude no double holds.
pub fn number_text_to_bson(text: &str) -> Result<Bson, NumberError> {
    if is_integer_literal(text) {
        if let Ok(v) = text.parse::<i32>() {
            return Ok(Bson::Int32(v));
        }
        if let Ok(v) = text.parse::<i64>() {
            return Ok(Bson::Int64(v));
        }
        if let Some(d) = integer_to_decimal128(text) {
            return Ok(Bson::Decimal128(d));
        }
    } else if !is_number_literal(text) {
        return Err(NumberError::NotANumber { text: text.to_string() });
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Bson::Double(v)),
        _ => Err(NumberError::OutOfRange { text: text.to_string() }),
    }
}

/// `-?[0-9]+`.
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// A JSON number: `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?` (leading zeros
/// tolerated).
pub(crate) fn is_number_literal(text: &str) -> bool {
    fn digits(s: &str) -> (bool, &str) {
        let end = s.bytes().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
        (end > 0, &s[end..])
    }
    let s = text.strip_prefix('-').unwrap_or(text);
    let (ok, mut rest) = digits(s);
    if !ok {
        return false;
    }
    if let Some(fraction) = rest.strip_prefix('.') {
        let (ok, after) = digits(fraction);
        if !ok {
            return false;
        }
        rest = after;
    }
    if let Some(exponent) = rest.strip_prefix(['e', 'E']) {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        let (ok, after) = digits(exponent);
        if !ok {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
}

/// An integer literal as an exact Decimal128, if its significant digits
/// fit: all its digits as the coefficient when they fit (`123` stays
/// `123`), else trailing zeros move to the exponent (`1` and 40 zeros is
/// `1E+40`).
fn integer_to_decimal128(text: &str) -> Option<Decimal128> {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let digits = digits.trim_start_matches('0');
    if digits.len() <= MAX_DECIMAL128_DIGITS {
        return Decimal128::from_str(text).ok();
    }
    let coefficient = digits.trim_end_matches('0');
    if coefficient.len() > MAX_DECIMAL128_DIGITS {
        return None;
    }
    let exponent = digits.len() - coefficient.len();
    Decimal128::from_str(&format!("{sign}{coefficient}E+{exponent}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::test_support::*;
    // --- numbers ---------------------------------------------------------

    #[test]
    fn integers_take_the_smallest_integer_type() {
        assert_eq!(number_text_to_bson("0").unwrap(), Bson::Int32(0));
        assert_eq!(number_text_to_bson("2147483647").unwrap(), Bson::Int32(i32::MAX));
        assert_eq!(number_text_to_bson("-2147483648").unwrap(), Bson::Int32(i32::MIN));
        assert_eq!(number_text_to_bson("2147483648").unwrap(), Bson::Int64(2_147_483_648));
        assert_eq!(number_text_to_bson("-2147483649").unwrap(), Bson::Int64(-2_147_483_649));
        assert_eq!(number_text_to_bson("9223372036854775807").unwrap(), Bson::Int64(i64::MAX));
        assert_eq!(number_text_to_bson("-9223372036854775808").unwrap(), Bson::Int64(i64::MIN));
    }

    #[test]
    fn negative_zero_integer_is_int32_zero() {
        assert_eq!(number_text_to_bson("-0").unwrap(), Bson::Int32(0));
        assert_eq!(value("-0"), Bson::Int32(0));
    }

    #[test]
    fn integers_past_i64_are_exact_decimal128() {
        let Bson::Decimal128(d) = number_text_to_bson("9223372036854775808").unwrap() else { panic!() };
        assert_eq!(d.to_string(), "9223372036854775808");
        let Bson::Decimal128(d) = number_text_to_bson("-9223372036854775809").unwrap() else { panic!() };
        assert_eq!(d.to_string(), "-9223372036854775809");
        // 34 significant digits: still exact.
        let text = "1234567890123456789012345678901234";
        assert_eq!(number_text_to_bson(text).unwrap(), Bson::Decimal128(decimal(text)));
        // Trailing zeros are not significant: 10^40 is exact.
        let big = format!("1{}", "0".repeat(40));
        assert_eq!(decimal_text(&number_text_to_bson(&big).unwrap()), "1E+40");
        assert_eq!(decimal_text(&number_text_to_bson(&format!("-{big}")).unwrap()), "-1E+40");
        let wide = "1234567890123456789012345678901234000000"; // 40 digits, 34 significant
        assert_eq!(decimal_text(&number_text_to_bson(wide).unwrap()), "1.234567890123456789012345678901234E+39");
        // Up to 34 digits the text is the coefficient, trailing zeros included.
        assert_eq!(decimal_text(&number_text_to_bson("10000000000000000000").unwrap()), "10000000000000000000");
    }

    #[test]
    fn integers_with_more_than_34_digits_are_doubles() {
        let text = "12345678901234567890123456789012345"; // 35 digits
        assert_eq!(number_text_to_bson(text).unwrap(), Bson::Double(text.parse::<f64>().unwrap()));
    }

    #[test]
    fn fractions_and_exponents_are_doubles() {
        assert_eq!(number_text_to_bson("1.0").unwrap(), Bson::Double(1.0));
        assert_eq!(number_text_to_bson("1e3").unwrap(), Bson::Double(1000.0));
        assert_eq!(number_text_to_bson("1E3").unwrap(), Bson::Double(1000.0));
        assert_eq!(number_text_to_bson("2.5e-3").unwrap(), Bson::Double(0.0025));
        assert_eq!(number_text_to_bson("0.1").unwrap(), Bson::Double(0.1));
        let Bson::Double(z) = number_text_to_bson("-0.0").unwrap() else { panic!() };
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn numbers_out_of_double_range_or_not_numbers_are_errors() {
        assert_eq!(
            number_text_to_bson("1e400").unwrap_err().to_string(),
            "number 1e400 is out of range for a BSON double"
        );
        let huge = "9".repeat(400);
        assert!(number_text_to_bson(&huge).unwrap_err().to_string().ends_with("... is out of range for a BSON double"));
        assert_eq!(number_text_to_bson("inf").unwrap_err().to_string(), "\"inf\" is not a number");
        assert_eq!(number_text_to_bson("NaN").unwrap_err().to_string(), "\"NaN\" is not a number");
        assert_eq!(number_text_to_bson("1.").unwrap_err().to_string(), "\"1.\" is not a number");
        assert_eq!(number_text_to_bson("").unwrap_err().to_string(), "\"\" is not a number");
    }
}
