//! Tokenizer shared by every expression kind.
//!
//! The token rules follow the grammar AWS publishes with its DAX clients
//! (`Tokens.g4`): whitespace is `[ \t\n\r]`, keywords are case-insensitive,
//! `#name` and `:value` placeholders are `#`/`:` followed by one or more of
//! `[A-Za-z0-9_]`, a list index is `0` or a digit run without a leading
//! zero, and any other character is a one-character "unknown" token that
//! the parser reports as a syntax error. One deliberate difference:
//! identifiers may start with `_` as well as a letter.

use crate::condition::Comparator;

/// Words the lexer turns into keyword tokens, in any expression kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keyword {
    And,
    Or,
    Not,
    Between,
    In,
    Set,
    Remove,
    Add,
    Delete,
}

impl Keyword {
    /// The keyword spelled by `word` (any case), if any.
    fn from_word(word: &str) -> Option<Keyword> {
        const KEYWORDS: [(&str, Keyword); 9] = [
            ("AND", Keyword::And),
            ("OR", Keyword::Or),
            ("NOT", Keyword::Not),
            ("BETWEEN", Keyword::Between),
            ("IN", Keyword::In),
            ("SET", Keyword::Set),
            ("REMOVE", Keyword::Remove),
            ("ADD", Keyword::Add),
            ("DELETE", Keyword::Delete),
        ];
        KEYWORDS.iter().find(|(text, _)| text.eq_ignore_ascii_case(word)).map(|&(_, keyword)| keyword)
    }
}

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// A bare name: attribute name or function name.
    Identifier,
    /// `#name`.
    NamePlaceholder,
    /// `:value`.
    ValuePlaceholder,
    /// A list index inside `[ ]`.
    Index,
    Keyword(Keyword),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    /// `=`, `<>`, `<`, `<=`, `>` or `>=`.
    Compare(Comparator),
    Plus,
    Minus,
    /// A quoted string: never valid, but reported as one token.
    StringLiteral,
    /// Any other character.
    Unknown,
}

/// One token: its kind and its byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub start: usize,
    pub end: usize,
}

/// Splits `src` into tokens, dropping whitespace. Never fails: characters
/// outside the language become [`TokenKind::Unknown`] tokens.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let start = pos;
        let byte = bytes[pos];
        let (kind, end) = match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {
                pos += 1;
                continue;
            }
            // A name starts with a letter: `_x` is a syntax error at `_`
            // (ScyllaDB's Alternator suite, run against DynamoDB).
            b'a'..=b'z' | b'A'..=b'Z' => {
                let end = scan_identifier_chars(bytes, pos + 1);
                let kind = Keyword::from_word(&src[start..end]).map_or(TokenKind::Identifier, TokenKind::Keyword);
                (kind, end)
            }
            b'#' | b':' => {
                let end = scan_identifier_chars(bytes, pos + 1);
                if end == pos + 1 {
                    (TokenKind::Unknown, end)
                } else if byte == b'#' {
                    (TokenKind::NamePlaceholder, end)
                } else {
                    (TokenKind::ValuePlaceholder, end)
                }
            }
            b'0' => (TokenKind::Index, pos + 1),
            b'1'..=b'9' => {
                let mut end = pos + 1;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                (TokenKind::Index, end)
            }
            b'(' => (TokenKind::LParen, pos + 1),
            b')' => (TokenKind::RParen, pos + 1),
            b'[' => (TokenKind::LBracket, pos + 1),
            b']' => (TokenKind::RBracket, pos + 1),
            b',' => (TokenKind::Comma, pos + 1),
            b'.' => (TokenKind::Dot, pos + 1),
            b'=' => (TokenKind::Compare(Comparator::Eq), pos + 1),
            b'+' => (TokenKind::Plus, pos + 1),
            b'-' => (TokenKind::Minus, pos + 1),
            b'<' => match bytes.get(pos + 1) {
                Some(b'=') => (TokenKind::Compare(Comparator::Le), pos + 2),
                Some(b'>') => (TokenKind::Compare(Comparator::Ne), pos + 2),
                _ => (TokenKind::Compare(Comparator::Lt), pos + 1),
            },
            b'>' => match bytes.get(pos + 1) {
                Some(b'=') => (TokenKind::Compare(Comparator::Ge), pos + 2),
                _ => (TokenKind::Compare(Comparator::Gt), pos + 1),
            },
            b'"' | b'\'' => match scan_string_literal(bytes, pos) {
                Some(end) => (TokenKind::StringLiteral, end),
                None => (TokenKind::Unknown, pos + 1),
            },
            _ => {
                // One whole character, so token text stays valid UTF-8.
                let width = src[pos..].chars().next().map_or(1, char::len_utf8);
                (TokenKind::Unknown, pos + width)
            }
        };
        tokens.push(Token { kind, start, end });
        pos = end;
    }
    tokens
}

/// The end of the run of `[A-Za-z0-9_]` starting at `pos`.
fn scan_identifier_chars(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
        pos += 1;
    }
    pos
}

/// The end (after the closing quote) of the quoted string opening at
/// `start`, honouring backslash escapes; `None` if it is never closed.
fn scan_string_literal(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = bytes[start];
    let mut pos = start + 1;
    while pos < bytes.len() {
        match bytes[pos] {
            b'\\' => pos += 2,
            b if b == quote => return Some(pos + 1),
            _ => pos += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds_and_texts(src: &str) -> Vec<(TokenKind, &str)> {
        tokenize(src).into_iter().map(|t| (t.kind, &src[t.start..t.end])).collect()
    }

    #[test]
    fn tokenizes_every_kind() {
        use TokenKind::*;
        assert_eq!(
            kinds_and_texts("a.b[10] <> #n and :v_1 (<=,>=) + - < > = \"x y\" é"),
            vec![
                (Identifier, "a"),
                (Dot, "."),
                (Identifier, "b"),
                (LBracket, "["),
                (Index, "10"),
                (RBracket, "]"),
                (Compare(Comparator::Ne), "<>"),
                (NamePlaceholder, "#n"),
                (Keyword(super::Keyword::And), "and"),
                (ValuePlaceholder, ":v_1"),
                (LParen, "("),
                (Compare(Comparator::Le), "<="),
                (Comma, ","),
                (Compare(Comparator::Ge), ">="),
                (RParen, ")"),
                (Plus, "+"),
                (Minus, "-"),
                (Compare(Comparator::Lt), "<"),
                (Compare(Comparator::Gt), ">"),
                (Compare(Comparator::Eq), "="),
                (StringLiteral, "\"x y\""),
                (Unknown, "é"),
            ]
        );
    }

    #[test]
    fn keywords_are_case_insensitive_but_whole_words() {
        use TokenKind::*;
        assert_eq!(
            kinds_and_texts("BeTwEeN andx IN remove_ Delete"),
            vec![
                (Keyword(super::Keyword::Between), "BeTwEeN"),
                (Identifier, "andx"),
                (Keyword(super::Keyword::In), "IN"),
                (Identifier, "remove_"),
                (Keyword(super::Keyword::Delete), "Delete"),
            ]
        );
    }

    #[test]
    fn lone_sigils_leading_zeros_and_open_quotes_are_separate_tokens() {
        use TokenKind::*;
        assert_eq!(
            kinds_and_texts("# : 01 'ab"),
            vec![(Unknown, "#"), (Unknown, ":"), (Index, "0"), (Index, "1"), (Unknown, "'"), (Identifier, "ab"),]
        );
        assert!(tokenize(" \t\r\n").is_empty());
    }
}
