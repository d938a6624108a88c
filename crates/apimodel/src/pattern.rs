//! The subset of Java regular expressions the models' `pattern` traits use,
//! matched against the whole string (as DynamoDB matches them) by a Thompson
//! NFA, so that time is linear in the input whatever a client sends.
//!
//! Supported: literals, `.`-free classes `[...]` and `[^...]` with ranges,
//! the escapes `\p{Print}`, `\w`, `\d`, `\s`, `\t`, `\r`, `\n`, `\xHH`,
//! `\uHHHH` (surrogate pairs combine), escaped punctuation, groups `(...)`,
//! the quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, and `^`/`$` at the
//! ends. A test parses every pattern of the generated tables.

/// Why a pattern could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub pattern: &'static str,
    pub at: usize,
}

/// Largest `{n,m}` bound accepted (the models use at most 126).
const MAX_REPEAT: u32 = 1000;

#[derive(Debug, Clone)]
enum Atom {
    Class { ranges: Vec<(u32, u32)>, negated: bool },
    Group(Vec<Item>),
}

#[derive(Debug, Clone)]
struct Item {
    atom: Atom,
    min: u32,
    max: Option<u32>,
}

#[derive(Debug, Clone)]
enum Inst {
    Class(usize),
    Split(usize, usize),
    Jmp(usize),
    Match,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    classes: Vec<(Vec<(u32, u32)>, bool)>,
    prog: Vec<Inst>,
}

struct Parser {
    src: &'static str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn err(&self) -> PatternError {
        PatternError { pattern: self.src, at: self.pos }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Result<char, PatternError> {
        let c = self.peek().ok_or_else(|| self.err())?;
        self.pos += 1;
        Ok(c)
    }

    fn hex(&mut self, n: usize) -> Result<u32, PatternError> {
        let mut v = 0;
        for _ in 0..n {
            let d = self.next()?.to_digit(16).ok_or_else(|| self.err())?;
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// An escape after `\`: one code point, or a whole class.
    fn escape(&mut self) -> Result<Result<u32, Vec<(u32, u32)>>, PatternError> {
        let c = self.next()?;
        Ok(match c {
            't' => Ok(9),
            'n' => Ok(10),
            'r' => Ok(13),
            'x' => Ok(self.hex(2)?),
            'u' => {
                let hi = self.hex(4)?;
                // A high surrogate followed by `\u` low surrogate is one code point.
                if (0xD800..0xDC00).contains(&hi)
                    && self.chars.get(self.pos) == Some(&'\\')
                    && self.chars.get(self.pos + 1) == Some(&'u')
                {
                    let save = self.pos;
                    self.pos += 2;
                    let lo = self.hex(4)?;
                    if (0xDC00..0xE000).contains(&lo) {
                        return Ok(Ok(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)));
                    }
                    self.pos = save;
                }
                Ok(hi)
            }
            'p' => {
                let rest: String = self.chars[self.pos..].iter().take(7).collect();
                if rest == "{Print}" {
                    self.pos += 7;
                    Err(vec![(0x20, 0x7E)])
                } else {
                    return Err(self.err());
                }
            }
            'w' => Err(vec![
                (b'0' as u32, b'9' as u32),
                (b'A' as u32, b'Z' as u32),
                (b'_' as u32, b'_' as u32),
                (b'a' as u32, b'z' as u32),
            ]),
            'd' => Err(vec![(b'0' as u32, b'9' as u32)]),
            's' => Err(vec![(9, 13), (32, 32)]),
            c if c.is_ascii_punctuation() => Ok(c as u32),
            _ => return Err(self.err()),
        })
    }

    fn class(&mut self) -> Result<Atom, PatternError> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let c = self.next()?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                match self.escape()? {
                    Ok(cp) => cp,
                    Err(set) => {
                        ranges.extend(set);
                        continue;
                    }
                }
            } else {
                c as u32
            };
            // A range `a-b`, unless `-` is last.
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let c2 = self.next()?;
                let hi = if c2 == '\\' { self.escape()?.map_err(|_| self.err())? } else { c2 as u32 };
                if hi < lo {
                    return Err(self.err());
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Atom::Class { ranges, negated })
    }

    fn number(&mut self) -> Result<u32, PatternError> {
        let start = self.pos;
        let mut v: u32 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            v = v.saturating_mul(10).saturating_add(d);
            self.pos += 1;
        }
        if self.pos == start || v > MAX_REPEAT {
            return Err(self.err());
        }
        Ok(v)
    }

    fn seq(&mut self, in_group: bool) -> Result<Vec<Item>, PatternError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            let atom = match c {
                ')' if in_group => break,
                '^' if self.pos == 0 => {
                    self.pos += 1;
                    continue;
                }
                '$' if self.pos + 1 == self.chars.len() => {
                    self.pos += 1;
                    continue;
                }
                '(' => {
                    self.pos += 1;
                    let inner = self.seq(true)?;
                    if self.next()? != ')' {
                        return Err(self.err());
                    }
                    Atom::Group(inner)
                }
                '[' => {
                    self.pos += 1;
                    self.class()?
                }
                '\\' => {
                    self.pos += 1;
                    match self.escape()? {
                        Ok(cp) => Atom::Class { ranges: vec![(cp, cp)], negated: false },
                        Err(ranges) => Atom::Class { ranges, negated: false },
                    }
                }
                '|' | ')' | '*' | '+' | '?' | '{' | '.' | '^' | '$' => return Err(self.err()),
                c => {
                    self.pos += 1;
                    Atom::Class { ranges: vec![(c as u32, c as u32)], negated: false }
                }
            };
            let quantifier = match self.peek() {
                Some('*') => Some((0, None)),
                Some('+') => Some((1, None)),
                Some('?') => Some((0, Some(1))),
                _ => None,
            };
            let (min, max) = match (quantifier, self.peek()) {
                (Some(q), _) => {
                    self.pos += 1;
                    q
                }
                (None, Some('{')) => {
                    self.pos += 1;
                    let n = self.number()?;
                    match self.next()? {
                        '}' => (n, Some(n)),
                        ',' if self.peek() == Some('}') => {
                            self.pos += 1;
                            (n, None)
                        }
                        ',' => {
                            let m = self.number()?;
                            if self.next()? != '}' || m < n {
                                return Err(self.err());
                            }
                            (n, Some(m))
                        }
                        _ => return Err(self.err()),
                    }
                }
                (None, _) => (1, Some(1)),
            };
            items.push(Item { atom, min, max });
        }
        Ok(items)
    }
}

impl Pattern {
    /// Parses and compiles a pattern.
    pub fn new(src: &'static str) -> Result<Pattern, PatternError> {
        let mut p = Parser { src, chars: src.chars().collect(), pos: 0 };
        let items = p.seq(false)?;
        if p.pos != p.chars.len() {
            return Err(p.err());
        }
        let mut out = Pattern { classes: Vec::new(), prog: Vec::new() };
        out.emit_seq(&items);
        out.prog.push(Inst::Match);
        Ok(out)
    }

    fn emit_seq(&mut self, items: &[Item]) {
        for item in items {
            for _ in 0..item.min {
                self.emit_atom(&item.atom);
            }
            match item.max {
                None => {
                    let split = self.prog.len();
                    self.prog.push(Inst::Split(split + 1, 0));
                    self.emit_atom(&item.atom);
                    self.prog.push(Inst::Jmp(split));
                    let end = self.prog.len();
                    self.prog[split] = Inst::Split(split + 1, end);
                }
                Some(max) => {
                    let mut splits = Vec::new();
                    for _ in item.min..max {
                        splits.push(self.prog.len());
                        self.prog.push(Inst::Split(0, 0));
                        self.emit_atom(&item.atom);
                    }
                    let end = self.prog.len();
                    for s in splits {
                        self.prog[s] = Inst::Split(s + 1, end);
                    }
                }
            }
        }
    }

    fn emit_atom(&mut self, atom: &Atom) {
        match atom {
            Atom::Class { ranges, negated } => {
                self.classes.push((ranges.clone(), *negated));
                self.prog.push(Inst::Class(self.classes.len() - 1));
            }
            Atom::Group(items) => self.emit_seq(items),
        }
    }

    fn add(&self, list: &mut Vec<usize>, seen: &mut [bool], pc: usize) {
        // Iterative closure over Split and Jmp.
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if seen[pc] {
                continue;
            }
            seen[pc] = true;
            match self.prog[pc] {
                Inst::Jmp(t) => stack.push(t),
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                _ => list.push(pc),
            }
        }
    }

    /// Whether the whole of `s` matches.
    pub fn matches(&self, s: &str) -> bool {
        let n = self.prog.len();
        let mut seen = vec![false; n];
        let mut current = Vec::new();
        self.add(&mut current, &mut seen, 0);
        let mut next = Vec::new();
        for c in s.chars() {
            seen.iter_mut().for_each(|v| *v = false);
            next.clear();
            for &pc in &current {
                if let Inst::Class(i) = self.prog[pc] {
                    let (ranges, negated) = &self.classes[i];
                    let cp = c as u32;
                    if ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi) != *negated {
                        self.add(&mut next, &mut seen, pc + 1);
                    }
                }
            }
            std::mem::swap(&mut current, &mut next);
            if current.is_empty() {
                return false;
            }
        }
        current.iter().any(|&pc| matches!(self.prog[pc], Inst::Match))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &'static str, s: &str) -> bool {
        Pattern::new(p).unwrap().matches(s)
    }

    #[test]
    fn table_name_pattern() {
        assert!(m("[a-zA-Z0-9_.-]+", "my_table-1.x"));
        assert!(!m("[a-zA-Z0-9_.-]+", "bad table!"));
        assert!(!m("[a-zA-Z0-9_.-]+", ""));
    }

    #[test]
    fn counted_groups_and_negation() {
        assert!(m("([0-9a-f]{16})+", "0123456789abcdef0123456789abcdef"));
        assert!(!m("([0-9a-f]{16})+", "0123456789abcdef0"));
        assert!(m("^[^\\$]+$", "abc"));
        assert!(!m("^[^\\$]+$", "a$c"));
        assert!(m("[A-Za-z0-9][A-Za-z0-9\\-\\_\\.]{0,126}[A-Za-z0-9]", "a-b"));
        assert!(!m("[A-Za-z0-9][A-Za-z0-9\\-\\_\\.]{0,126}[A-Za-z0-9]", "a-"));
        assert!(m(
            "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "0123abcd-0123-4567-89ab-0123456789ab"
        ));
    }

    #[test]
    fn escapes_and_surrogate_pairs() {
        let p = "[\\u0020-\\uD7FF\\uE000-\\uFFFD\\uD800\\uDC00-\\uDBFF\\uDFFF\\r\\n\\t]*";
        assert!(m(p, "arn:aws:iam::1:role/x\t😀"));
        assert!(!m(p, "\u{1}"));
        assert!(m("\\p{Print}+", "any printable ~"));
        assert!(!m("\\p{Print}+", "tab\t"));
        assert!(m("[\\x20-\\x21\\x23-\\x2B\\x2D-\\x7E]*", "a b"));
        assert!(!m("[\\x20-\\x21\\x23-\\x2B\\x2D-\\x7E]*", "a,b"));
        assert!(m("^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$", "my-bucket.v2"));
        assert!(!m("^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$", "-bucket"));
    }

    #[test]
    fn long_inputs_stay_linear() {
        // A backtracking matcher would take cubic time here.
        let s = "a".repeat(100_000) + "!";
        assert!(!m("^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$", &s));
    }

    #[test]
    fn rejects_unsupported_syntax() {
        assert_eq!(Pattern::new("a|b").unwrap_err().at, 1);
        assert!(Pattern::new("[a-").is_err());
        assert!(Pattern::new("a{2,1}").is_err());
    }
}
