//! Tokens of DynamoDB's PartiQL: keywords and bare identifiers (told apart
//! by the parser, case-insensitively), `"quoted"` identifiers,
//! `'single-quoted'` strings (`''` is a quote), numbers with an optional
//! fraction and exponent, `?`, punctuation, and `--` and `/* */` comments.

use crate::ParseError;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// A bare word: a keyword or an identifier, as written.
    Word(String),
    /// A `"quoted"` identifier, unescaped.
    Quoted(String),
    /// A `'string'`, unescaped.
    Str(String),
    /// A number's text, as written (no sign).
    Num(String),
    /// `?`.
    Param,
    /// Punctuation and operators: `( ) [ ] { } , . : * + - = <> != < <= > >= << >>`.
    Punct(&'static str),
}

/// Operators of two characters first, so that `<=` is not `<` then `=`.
const PUNCT: [&str; 20] =
    ["<<", ">>", "<>", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "*", "+", "-", "=", "<"];

/// `>` alone (kept apart: `PUNCT` is ordered longest first).
const GREATER: &str = ">";

/// Splits `text` into tokens.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Tok>, ParseError> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let c = bytes[pos];
        if c.is_ascii_whitespace() {
            pos += 1;
        } else if text[pos..].starts_with("--") {
            pos = text[pos..].find('\n').map_or(bytes.len(), |n| pos + n + 1);
        } else if text[pos..].starts_with("/*") {
            let end = text[pos + 2..].find("*/").ok_or(ParseError::Lexical)?;
            pos += 2 + end + 2;
        } else if c == b'"' || c == b'\'' {
            let (value, next) = quoted(text, pos, c as char)?;
            out.push(if c == b'"' { Tok::Quoted(value) } else { Tok::Str(value) });
            pos = next;
        } else if c.is_ascii_digit() || (c == b'.' && bytes.get(pos + 1).is_some_and(u8::is_ascii_digit)) {
            let start = pos;
            while pos < bytes.len() && (bytes[pos].is_ascii_digit() || bytes[pos] == b'.') {
                pos += 1;
            }
            if pos < bytes.len() && (bytes[pos] == b'e' || bytes[pos] == b'E') {
                pos += 1;
                if pos < bytes.len() && (bytes[pos] == b'+' || bytes[pos] == b'-') {
                    pos += 1;
                }
                let digits = pos;
                while pos < bytes.len() && bytes[pos].is_ascii_digit() {
                    pos += 1;
                }
                // An exponent must have digits and fit 32 bits (S133).
                if pos == digits || text[digits..pos].parse::<i32>().is_err() {
                    return Err(ParseError::Lexical);
                }
            }
            let number = &text[start..pos];
            if number.matches('.').count() > 1 {
                return Err(ParseError::Lexical);
            }
            out.push(Tok::Num(number.to_string()));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = pos;
            while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_' || bytes[pos] == b'$')
            {
                pos += 1;
            }
            out.push(Tok::Word(text[start..pos].to_string()));
        } else if c == b'?' {
            out.push(Tok::Param);
            pos += 1;
        } else if let Some(p) = PUNCT.iter().chain([GREATER].iter()).find(|p| text[pos..].starts_with(**p)) {
            out.push(Tok::Punct(p));
            pos += p.len();
        } else {
            return Err(ParseError::Lexical);
        }
    }
    Ok(out)
}

/// The content of the quoted token starting at `start`, a doubled quote
/// standing for one, and the position after it.
fn quoted(text: &str, start: usize, quote: char) -> Result<(String, usize), ParseError> {
    let mut value = String::new();
    let mut chars = text[start + 1..].char_indices().peekable();
    while let Some((i, ch)) = chars.next() {
        if ch == quote {
            if chars.peek().is_some_and(|&(_, next)| next == quote) {
                value.push(quote);
                chars.next();
                continue;
            }
            return Ok((value, start + 1 + i + 1));
        }
        value.push(ch);
    }
    Err(ParseError::Lexical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_statement() {
        let t = tokenize("SELECT a FROM \"my-t\" WHERE x <= 1.5e3 AND s = 'it''s' -- note\n AND y <> ?").unwrap();
        assert_eq!(
            t,
            vec![
                Tok::Word("SELECT".into()),
                Tok::Word("a".into()),
                Tok::Word("FROM".into()),
                Tok::Quoted("my-t".into()),
                Tok::Word("WHERE".into()),
                Tok::Word("x".into()),
                Tok::Punct("<="),
                Tok::Num("1.5e3".into()),
                Tok::Word("AND".into()),
                Tok::Word("s".into()),
                Tok::Punct("="),
                Tok::Str("it's".into()),
                Tok::Word("AND".into()),
                Tok::Word("y".into()),
                Tok::Punct("<>"),
                Tok::Param,
            ]
        );
    }

    #[test]
    fn comments_sets_and_bad_input() {
        assert_eq!(
            tokenize("/* c */ <<1, .5>>").unwrap(),
            vec![Tok::Punct("<<"), Tok::Num("1".into()), Tok::Punct(","), Tok::Num(".5".into()), Tok::Punct(">>")]
        );
        for bad in ["a # b", "/* open", "'open", "1e99999999999", "1e"] {
            assert_eq!(tokenize(bad), Err(ParseError::Lexical), "{bad}");
        }
    }
}
