//! Exact decimal numbers as DynamoDB stores them: up to 38 significant
//! digits, magnitude from 1E-130 to 9.99…E+125, compared numerically and
//! never passed through `f64`.

use std::cmp::Ordering;
use std::fmt;

/// Most significant digits a DynamoDB number may carry.
pub const MAX_SIGNIFICANT_DIGITS: usize = 38;
/// Largest allowed `exp` in `0.d1d2… × 10^exp` (9.99…E+125).
const MAX_EXP: i32 = 126;
/// Smallest allowed `exp` in `0.d1d2… × 10^exp` (1E-130).
const MIN_EXP: i32 = -129;

/// Why a text is not a storable DynamoDB number. `Display` gives the exact
/// message DynamoDB answers with (a ValidationException).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NumberError {
    /// Not a decimal literal at all.
    Invalid,
    /// More than 38 significant digits.
    Precision,
    /// Magnitude above 9.99…E+125.
    Overflow,
    /// Magnitude (non-zero) below 1E-130.
    Underflow,
}

/// DynamoDB's answer to a text that is not a number; it adds ": <text>" when
/// the text is not empty (dynalite's tests, run against DynamoDB; ScyllaDB's
/// Alternator suite matches "numeric"). See [`invalid_number_message`].
pub const INVALID_NUMBER: &str = "The parameter cannot be converted to a numeric value";

/// DynamoDB's message for `text`, which is not a number.
pub fn invalid_number_message(text: &str) -> String {
    if text.is_empty() {
        INVALID_NUMBER.to_string()
    } else {
        format!("{INVALID_NUMBER}: {text}")
    }
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NumberError::Invalid => INVALID_NUMBER,
            NumberError::Precision => "Attempting to store more than 38 significant digits in a Number",
            NumberError::Overflow => {
                "Number overflow. Attempting to store a number with magnitude larger than supported range"
            }
            NumberError::Underflow => {
                "Number underflow. Attempting to store a number with magnitude smaller than supported range"
            }
        })
    }
}

impl std::error::Error for NumberError {}

/// A normalized decimal: `(-1)^negative × 0.d1d2…dn × 10^exp`, digits with
/// no leading or trailing zeros. Zero has no digits, is never negative and
/// has `exp` 0, so equal values have equal representations.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Number {
    negative: bool,
    digits: Box<[u8]>,
    exp: i32,
}

impl Number {
    /// Bytes this number holds on the heap (its digits).
    pub fn heap_bytes(&self) -> usize {
        self.digits.len()
    }

    /// Zero.
    pub fn zero() -> Number {
        Number { negative: false, digits: Box::new([]), exp: 0 }
    }

    /// Parses DynamoDB's number text: optional sign, digits with an
    /// optional point, optional exponent. Checks precision and range.
    pub fn parse(text: &str) -> Result<Number, NumberError> {
        let bytes = text.as_bytes();
        let mut pos = 0;
        let mut negative = false;
        if pos < bytes.len() && (bytes[pos] == b'+' || bytes[pos] == b'-') {
            negative = bytes[pos] == b'-';
            pos += 1;
        }
        let mut mantissa: Vec<u8> = Vec::with_capacity(bytes.len());
        let mut digits_before_point: i64 = 0;
        let mut seen_point = false;
        let mut any_digit = false;
        while pos < bytes.len() {
            let b = bytes[pos];
            if b.is_ascii_digit() {
                any_digit = true;
                mantissa.push(b - b'0');
                if !seen_point {
                    digits_before_point += 1;
                }
            } else if b == b'.' && !seen_point {
                seen_point = true;
            } else {
                break;
            }
            pos += 1;
        }
        if !any_digit {
            return Err(NumberError::Invalid);
        }
        let mut exp10: i64 = 0;
        if pos < bytes.len() && (bytes[pos] == b'e' || bytes[pos] == b'E') {
            pos += 1;
            let mut exp_negative = false;
            if pos < bytes.len() && (bytes[pos] == b'+' || bytes[pos] == b'-') {
                exp_negative = bytes[pos] == b'-';
                pos += 1;
            }
            let start = pos;
            while pos < bytes.len() && bytes[pos].is_ascii_digit() {
                // Saturate: anything this large is out of range anyway.
                exp10 = (exp10 * 10 + i64::from(bytes[pos] - b'0')).min(1_000_000);
                pos += 1;
            }
            if pos == start {
                return Err(NumberError::Invalid);
            }
            if exp_negative {
                exp10 = -exp10;
            }
        }
        if pos != bytes.len() {
            return Err(NumberError::Invalid);
        }
        // Strip leading zeros (each shifts the point left by one).
        let leading = mantissa.iter().take_while(|&&d| d == 0).count();
        if leading == mantissa.len() {
            return Ok(Number::zero());
        }
        let trailing = mantissa.iter().rev().take_while(|&&d| d == 0).count();
        let digits = &mantissa[leading..mantissa.len() - trailing];
        let exp = digits_before_point - leading as i64 + exp10;
        Number::from_parts(negative, digits.to_vec(), exp)
    }

    /// Builds from normalized parts, checking precision and range.
    fn from_parts(negative: bool, digits: Vec<u8>, exp: i64) -> Result<Number, NumberError> {
        if digits.is_empty() {
            return Ok(Number::zero());
        }
        if digits.len() > MAX_SIGNIFICANT_DIGITS {
            return Err(NumberError::Precision);
        }
        if exp > i64::from(MAX_EXP) {
            return Err(NumberError::Overflow);
        }
        if exp < i64::from(MIN_EXP) {
            return Err(NumberError::Underflow);
        }
        Ok(Number { negative, digits: digits.into_boxed_slice(), exp: exp as i32 })
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// True for values below zero.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Significant digits (no leading or trailing zeros).
    pub fn digit_count(&self) -> usize {
        self.digits.len()
    }

    /// Storage size in bytes by DynamoDB's rule: one byte per two
    /// significant digits plus one, a byte more for a negative number, and
    /// a byte more when the digit count and the scientific exponent are both
    /// even. Zero is one byte.
    pub fn size_bytes(&self) -> usize {
        if self.is_zero() {
            return 1;
        }
        let n = self.digits.len();
        // Scientific exponent: value = d1.d2d3… × 10^sci.
        let sci = self.exp - 1;
        let pad = if n.is_multiple_of(2) && sci.rem_euclid(2) == 0 { 1 } else { 0 };
        1 + n.div_ceil(2) + pad + usize::from(self.negative)
    }

    /// Exact sum, checked against DynamoDB's precision and range.
    pub fn checked_add(&self, other: &Number) -> Result<Number, NumberError> {
        if self.is_zero() {
            return Ok(other.clone());
        }
        if other.is_zero() {
            return Ok(self.clone());
        }
        // Align both on a common least-significant position.
        let low_a = i64::from(self.exp) - self.digits.len() as i64;
        let low_b = i64::from(other.exp) - other.digits.len() as i64;
        let low = low_a.min(low_b);
        let high = i64::from(self.exp.max(other.exp)) + 1;
        let width = (high - low) as usize;
        let a = aligned(self, low, width);
        let b = aligned(other, low, width);
        let (negative, digits) = if self.negative == other.negative {
            (self.negative, add_digits(&a, &b))
        } else {
            match cmp_digits(&a, &b) {
                Ordering::Equal => return Ok(Number::zero()),
                Ordering::Greater => (self.negative, sub_digits(&a, &b)),
                Ordering::Less => (other.negative, sub_digits(&b, &a)),
            }
        };
        // digits is most-significant first with its top at position `high`.
        let leading = digits.iter().take_while(|&&d| d == 0).count();
        let trailing = digits.iter().rev().take_while(|&&d| d == 0).count();
        if leading == digits.len() {
            return Ok(Number::zero());
        }
        let exp = high - leading as i64;
        let kept = digits[leading..digits.len() - trailing].to_vec();
        Number::from_parts(negative, kept, exp)
    }

    /// Exact difference, checked like [`Number::checked_add`].
    pub fn checked_sub(&self, other: &Number) -> Result<Number, NumberError> {
        self.checked_add(&other.negated())
    }

    /// The same magnitude with the other sign.
    pub fn negated(&self) -> Number {
        let mut n = self.clone();
        if !n.is_zero() {
            n.negative = !n.negative;
        }
        n
    }

    /// Parses an integer value, for tests and counters.
    pub fn from_i64(value: i64) -> Number {
        // An i64 always has at most 19 digits, so this cannot fail.
        Number::parse(&value.to_string()).unwrap_or_else(|_| Number::zero())
    }

    /// Appends the packed magnitude of a non-zero number (zero appends
    /// nothing): one byte of exponent (`exp - MIN_EXP`, 0..=255), then the
    /// digits two to a byte, each as a nibble `digit + 1`, ending with a zero
    /// nibble (a zero byte after an even count). Of two positive numbers,
    /// the smaller's bytes compare lower, and neither is a prefix of the
    /// other.
    pub(crate) fn write_magnitude(&self, buf: &mut Vec<u8>) {
        if self.is_zero() {
            return;
        }
        // The range check at construction keeps exp in MIN_EXP..=MAX_EXP.
        buf.push((self.exp - MIN_EXP).clamp(0, 255) as u8);
        let mut pairs = self.digits.chunks_exact(2);
        for pair in pairs.by_ref() {
            buf.push(((pair[0] + 1) << 4) | (pair[1] + 1));
        }
        match pairs.remainder() {
            [last] => buf.push((last + 1) << 4),
            _ => buf.push(0),
        }
    }

    /// Reads a packed magnitude from the front of `bytes` (as
    /// [`Number::write_magnitude`] wrote it, each byte complemented when
    /// `inverted`), returning the number and the bytes read; `None` when the
    /// bytes are not a normalized number in range.
    pub(crate) fn read_magnitude(bytes: &[u8], negative: bool, inverted: bool) -> Option<(Number, usize)> {
        let flip = if inverted { 0xff } else { 0 };
        let (&e, rest) = bytes.split_first()?;
        let exp = i32::from(e ^ flip) + MIN_EXP;
        let mut digits = Vec::with_capacity(8);
        let mut used = 1;
        let mut terminated = false;
        'bytes: for &b in rest {
            used += 1;
            let b = b ^ flip;
            for nibble in [b >> 4, b & 0x0f] {
                match nibble {
                    // The end: what is left of the byte must be zero too.
                    0 => {
                        terminated = b & 0x0f == 0;
                        break 'bytes;
                    }
                    1..=10 => digits.push(nibble - 1),
                    _ => return None,
                }
            }
            if digits.len() > MAX_SIGNIFICANT_DIGITS {
                return None;
            }
        }
        // Normalized: no leading or trailing zero digit.
        if !terminated || digits.first().is_none_or(|&d| d == 0) || digits.last() == Some(&0) {
            return None;
        }
        let n = Number::from_parts(negative, digits, i64::from(exp)).ok()?;
        Some((n, used))
    }

    /// Best-effort conversion for display and statistics, never for storage.
    pub fn to_f64_lossy(&self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }
}

/// Digits of `n` laid out most-significant first over `width` positions
/// whose lowest position is `low`.
fn aligned(n: &Number, low: i64, width: usize) -> Vec<u8> {
    let mut out = vec![0u8; width];
    let n_low = i64::from(n.exp) - n.digits.len() as i64;
    for (i, &d) in n.digits.iter().rev().enumerate() {
        let pos = (n_low - low) as usize + i;
        out[width - 1 - pos] = d;
    }
    out
}

fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; a.len()];
    let mut carry = 0u8;
    for i in (0..a.len()).rev() {
        let s = a[i] + b[i] + carry;
        out[i] = s % 10;
        carry = s / 10;
    }
    // The top position is a spare zero in both inputs, so no carry escapes.
    out
}

fn sub_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; a.len()];
    let mut borrow = 0i8;
    for i in (0..a.len()).rev() {
        let mut d = a[i] as i8 - b[i] as i8 - borrow;
        borrow = 0;
        if d < 0 {
            d += 10;
            borrow = 1;
        }
        out[i] = d as u8;
    }
    out
}

fn cmp_digits(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        let sign = |n: &Number| {
            if n.is_zero() {
                0
            } else if n.negative {
                -1
            } else {
                1
            }
        };
        let (sa, sb) = (sign(self), sign(other));
        if sa != sb {
            return sa.cmp(&sb);
        }
        if sa == 0 {
            return Ordering::Equal;
        }
        let magnitude = self.exp.cmp(&other.exp).then_with(|| self.digits.cmp(&other.digits));
        if sa < 0 {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Canonical text in plain notation: no exponent, no leading or trailing
/// zeros ("1.50" prints as "1.5", "1E2" as "100").
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut s = String::with_capacity(self.digits.len() + 8);
        if self.negative {
            s.push('-');
        }
        let n = self.digits.len() as i32;
        let digit = |d: u8| char::from(b'0' + d);
        if self.exp <= 0 {
            s.push_str("0.");
            for _ in 0..-self.exp {
                s.push('0');
            }
            s.extend(self.digits.iter().map(|&d| digit(d)));
        } else if self.exp >= n {
            s.extend(self.digits.iter().map(|&d| digit(d)));
            for _ in 0..self.exp - n {
                s.push('0');
            }
        } else {
            let (int, frac) = self.digits.split_at(self.exp as usize);
            s.extend(int.iter().map(|&d| digit(d)));
            s.push('.');
            s.extend(frac.iter().map(|&d| digit(d)));
        }
        f.write_str(&s)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "N({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn canonical_text_round_trips() {
        for (input, out) in [
            ("0", "0"),
            ("-0", "0"),
            ("0.000", "0"),
            ("007", "7"),
            ("1.50", "1.5"),
            ("1E2", "100"),
            ("1e-2", "0.01"),
            ("-12.345e1", "-123.45"),
            (".5", "0.5"),
            ("5.", "5"),
            ("+3", "3"),
            ("12345678901234567890123456789012345678", "12345678901234567890123456789012345678"),
        ] {
            assert_eq!(n(input).to_string(), out, "input {input}");
            assert_eq!(n(out), n(input));
        }
        let tiny = format!("0.{}1", "0".repeat(129));
        assert_eq!(n("1E-130").to_string(), tiny);
        assert_eq!(n(&tiny), n("1E-130"));
    }

    #[test]
    fn rejects_invalid_and_out_of_range() {
        for bad in ["", "-", "abc", "1.2.3", "1e", "1e+", " 1", "1 ", "0x10", "NaN", "Infinity", "1_000"] {
            assert_eq!(Number::parse(bad), Err(NumberError::Invalid), "input {bad:?}");
        }
        assert_eq!(Number::parse("123456789012345678901234567890123456789"), Err(NumberError::Precision));
        assert_eq!(Number::parse("1E126"), Err(NumberError::Overflow));
        assert!(Number::parse("9.9999999999999999999999999999999999999E+125").is_ok());
        assert_eq!(Number::parse("1E-131"), Err(NumberError::Underflow));
        // Trailing zeros are not significant.
        assert!(Number::parse("1234567890123456789012345678901234567800000").is_ok());
    }

    #[test]
    fn orders_numerically() {
        let mut v: Vec<Number> =
            ["10", "-1", "9", "0", "-10", "0.5", "1E2", "-0.001", "99.99"].iter().map(|s| n(s)).collect();
        v.sort();
        let out: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        assert_eq!(out, ["-10", "-1", "-0.001", "0", "0.5", "9", "10", "99.99", "100"]);
    }

    #[test]
    fn adds_and_subtracts_exactly() {
        assert_eq!(n("0.1").checked_add(&n("0.2")).unwrap().to_string(), "0.3");
        assert_eq!(n("999").checked_add(&n("1")).unwrap().to_string(), "1000");
        assert_eq!(n("1").checked_sub(&n("1")).unwrap().to_string(), "0");
        assert_eq!(n("5").checked_sub(&n("7.25")).unwrap().to_string(), "-2.25");
        assert_eq!(n("-5").checked_add(&n("-7")).unwrap().to_string(), "-12");
        assert_eq!(n("1E100").checked_add(&n("1")).unwrap_err(), NumberError::Precision);
        assert_eq!(
            n("12345678901234567890123456789012345678").checked_add(&n("1")).unwrap().to_string(),
            "12345678901234567890123456789012345679"
        );
    }

    #[test]
    fn size_follows_dynamodb_rule() {
        // 1 + ceil(digits/2) + (even digits and even sci exponent) + negative
        assert_eq!(n("0").size_bytes(), 1);
        assert_eq!(n("1").size_bytes(), 2);
        assert_eq!(n("12").size_bytes(), 2); // sci exp 1: odd
        assert_eq!(n("1.2").size_bytes(), 3); // sci exp 0: even, 2 digits
        assert_eq!(n("123").size_bytes(), 3);
        assert_eq!(n("-1").size_bytes(), 3);
        assert_eq!(n("12345678901234567890123456789012345678").size_bytes(), 20);
        assert_eq!(n("1234567890123456789012345678901234567.8").size_bytes(), 21);
    }
}
