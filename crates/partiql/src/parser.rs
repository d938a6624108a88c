//! A recursive-descent parser over [`Tok`]s. Depth is bounded by
//! [`MAX_NESTING`] on every recursive rule.

use crate::lexer::{tokenize, Tok};
use crate::*;

/// Functions DynamoDB's PartiQL knows (S128, S130), lower-case.
const FUNCTIONS: [&str; 9] = [
    "begins_with",
    "contains",
    "attribute_type",
    "size",
    "attribute_exists",
    "attribute_not_exists",
    "list_append",
    "set_add",
    "set_delete",
];

/// `IS <type>` names and the DynamoDB types they test.
const TYPE_NAMES: [(&str, &str); 10] = [
    ("STRING", "S"),
    ("NUMBER", "N"),
    ("BOOLEAN", "BOOL"),
    ("BOOL", "BOOL"),
    ("BLOB", "B"),
    ("BINARY", "B"),
    ("LIST", "L"),
    ("TUPLE", "M"),
    ("STRUCT", "M"),
    ("MAP", "M"),
];

/// Parses one statement.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let tokens = tokenize(text)?;
    let mut p = Parser { tokens, pos: 0, params: 0, depth: 0 };
    let statement = p.statement()?;
    if p.pos < p.tokens.len() {
        return Err(ParseError::TrailingTokens);
    }
    Ok(Parsed { statement, parameters: p.params })
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
    /// `?`s seen so far.
    params: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// True (and consumed) when the next token is the keyword `kw`.
    fn keyword(&mut self, kw: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw)) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn expect_keyword(&mut self, kw: &str) -> Result<(), ParseError> {
        if self.keyword(kw) {
            Ok(())
        } else {
            Err(ParseError::UnexpectedTerm)
        }
    }

    fn punct(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.pos += 1;
            return true;
        }
        false
    }

    fn expect_punct(&mut self, p: &str) -> Result<(), ParseError> {
        if self.punct(p) {
            Ok(())
        } else {
            Err(ParseError::UnexpectedTerm)
        }
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(ParseError::TooDeep);
        }
        Ok(())
    }

    fn statement(&mut self) -> Result<Statement, ParseError> {
        if self.keyword("SELECT") {
            return Ok(Statement::Select(self.select_body()?));
        }
        if self.keyword("EXISTS") {
            self.expect_punct("(")?;
            self.expect_keyword("SELECT")?;
            let select = self.select_body()?;
            self.expect_punct(")")?;
            return Ok(Statement::Exists(select));
        }
        if self.keyword("INSERT") {
            self.expect_keyword("INTO")?;
            let table = self.name()?;
            self.expect_keyword("VALUE")?;
            let value = self.expr()?;
            return Ok(Statement::Insert { table, value });
        }
        if self.keyword("UPDATE") {
            let table = self.name()?;
            self.no_alias()?;
            let mut actions = Vec::new();
            loop {
                if self.keyword("SET") {
                    loop {
                        let path = self.path()?;
                        self.expect_punct("=")?;
                        actions.push(UpdateAction::Set(path, self.expr()?));
                        if !self.punct(",") {
                            break;
                        }
                    }
                } else if self.keyword("REMOVE") {
                    loop {
                        actions.push(UpdateAction::Remove(self.path()?));
                        if !self.punct(",") {
                            break;
                        }
                    }
                } else {
                    break;
                }
            }
            if actions.is_empty() {
                return Err(ParseError::UnexpectedTerm);
            }
            self.expect_keyword("WHERE")?;
            let condition = self.expr()?;
            let returning = self.returning()?;
            return Ok(Statement::Update { table, actions, condition, returning });
        }
        if self.keyword("DELETE") {
            self.expect_keyword("FROM")?;
            let table = self.name()?;
            self.no_alias()?;
            self.expect_keyword("WHERE")?;
            let condition = self.expr()?;
            let returning = self.returning()?;
            return Ok(Statement::Delete { table, condition, returning });
        }
        Err(ParseError::UnexpectedTerm)
    }

    /// The rest of a SELECT after the keyword.
    fn select_body(&mut self) -> Result<Select, ParseError> {
        let projection = if self.punct("*") {
            None
        } else {
            let mut paths = vec![self.path()?];
            while self.punct(",") {
                paths.push(self.path()?);
            }
            Some(paths)
        };
        self.expect_keyword("FROM")?;
        let table = self.name()?;
        let index = if self.punct(".") { Some(self.name()?) } else { None };
        self.no_alias()?;
        let condition = if self.keyword("WHERE") { Some(self.expr()?) } else { None };
        let mut order_by = Vec::new();
        if self.keyword("ORDER") {
            self.expect_keyword("BY")?;
            loop {
                let path = self.path()?;
                let desc = if self.keyword("DESC") {
                    true
                } else {
                    self.keyword("ASC");
                    false
                };
                order_by.push((path, desc));
                if !self.punct(",") {
                    break;
                }
            }
        }
        Ok(Select { table, index, projection, condition, order_by })
    }

    /// Refuses `AS t` or `t` after a table name (S134).
    fn no_alias(&mut self) -> Result<(), ParseError> {
        match self.peek() {
            Some(Tok::Word(w)) if w.eq_ignore_ascii_case("AS") => Err(ParseError::Aliasing),
            Some(Tok::Quoted(_)) => Err(ParseError::Aliasing),
            Some(Tok::Word(w)) if !is_clause_keyword(w) => Err(ParseError::Aliasing),
            _ => Ok(()),
        }
    }

    fn returning(&mut self) -> Result<Option<Returning>, ParseError> {
        if !self.keyword("RETURNING") {
            return Ok(None);
        }
        let all = if self.keyword("ALL") {
            true
        } else {
            self.expect_keyword("MODIFIED")?;
            false
        };
        let old = if self.keyword("OLD") {
            true
        } else {
            self.expect_keyword("NEW")?;
            false
        };
        self.expect_punct("*")?;
        Ok(Some(match (all, old) {
            (true, true) => Returning::AllOld,
            (false, true) => Returning::ModifiedOld,
            (true, false) => Returning::AllNew,
            (false, false) => Returning::ModifiedNew,
        }))
    }

    /// A table, index or attribute name: quoted, or a bare word.
    fn name(&mut self) -> Result<String, ParseError> {
        match self.next() {
            Some(Tok::Quoted(s)) | Some(Tok::Word(s)) => Ok(s),
            _ => Err(ParseError::UnexpectedTerm),
        }
    }

    fn path(&mut self) -> Result<Path, ParseError> {
        let mut steps = vec![Step::Attr(self.name()?)];
        self.path_steps(&mut steps)?;
        Ok(Path(steps))
    }

    fn path_steps(&mut self, steps: &mut Vec<Step>) -> Result<(), ParseError> {
        loop {
            if self.punct(".") {
                steps.push(Step::Attr(self.name()?));
            } else if self.punct("[") {
                let index = match self.next() {
                    Some(Tok::Num(n)) => n.parse::<u32>().map_err(|_| ParseError::UnexpectedTerm)?,
                    _ => return Err(ParseError::UnexpectedTerm),
                };
                self.expect_punct("]")?;
                steps.push(Step::Index(index));
            } else {
                return Ok(());
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let mut left = self.and()?;
        while self.keyword("OR") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.depth -= 1;
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.not()?;
        while self.keyword("AND") {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.keyword("NOT") {
            self.enter()?;
            let inner = self.not()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Expr, ParseError> {
        let left = self.additive()?;
        let op = match self.peek() {
            Some(Tok::Punct("=")) => Some(CompareOp::Eq),
            Some(Tok::Punct("<>")) | Some(Tok::Punct("!=")) => Some(CompareOp::Ne),
            Some(Tok::Punct("<")) => Some(CompareOp::Lt),
            Some(Tok::Punct("<=")) => Some(CompareOp::Le),
            Some(Tok::Punct(">")) => Some(CompareOp::Gt),
            Some(Tok::Punct(">=")) => Some(CompareOp::Ge),
            _ => None,
        };
        if let Some(op) = op {
            self.pos += 1;
            return Ok(Expr::Compare(op, Box::new(left), Box::new(self.additive()?)));
        }
        let negated = self.keyword("NOT");
        let out = if self.keyword("BETWEEN") {
            let low = self.additive()?;
            self.expect_keyword("AND")?;
            Expr::Between(Box::new(left), Box::new(low), Box::new(self.additive()?))
        } else if self.keyword("IN") {
            let close = if self.punct("[") {
                "]"
            } else {
                self.expect_punct("(")?;
                ")"
            };
            let mut items = vec![self.additive()?];
            while self.punct(",") {
                items.push(self.additive()?);
            }
            self.expect_punct(close)?;
            Expr::In(Box::new(left), items)
        } else if !negated && self.keyword("IS") {
            let negated = self.keyword("NOT");
            let kind = match self.next() {
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("MISSING") => IsKind::Missing,
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("NULL") => IsKind::Null,
                Some(Tok::Word(w)) => TYPE_NAMES
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(&w))
                    .map(|&(_, t)| IsKind::Type(t))
                    .ok_or(ParseError::UnexpectedTerm)?,
                _ => return Err(ParseError::UnexpectedTerm),
            };
            return Ok(Expr::Is { expr: Box::new(left), negated, kind });
        } else if negated {
            return Err(ParseError::UnexpectedTerm);
        } else {
            return Ok(left);
        };
        Ok(if negated { Expr::Not(Box::new(out)) } else { out })
    }

    fn additive(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.primary()?;
        loop {
            let plus = if self.punct("+") {
                true
            } else if self.punct("-") {
                false
            } else {
                return Ok(left);
            };
            left = Expr::Arith(plus, Box::new(left), Box::new(self.primary()?));
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let out = self.primary_inner();
        self.depth -= 1;
        out
    }

    fn primary_inner(&mut self) -> Result<Expr, ParseError> {
        match self.next() {
            Some(Tok::Str(s)) => Ok(Expr::Str(s)),
            Some(Tok::Num(n)) => Ok(Expr::Num(n)),
            Some(Tok::Punct("-")) => match self.next() {
                Some(Tok::Num(n)) => Ok(Expr::Num(format!("-{n}"))),
                _ => Err(ParseError::UnexpectedTerm),
            },
            Some(Tok::Param) => {
                self.params += 1;
                Ok(Expr::Param(self.params - 1))
            }
            Some(Tok::Punct("(")) => {
                let inner = self.expr()?;
                self.expect_punct(")")?;
                Ok(inner)
            }
            Some(Tok::Punct("{")) => {
                let mut fields = Vec::new();
                if !self.punct("}") {
                    loop {
                        let key = match self.next() {
                            Some(Tok::Str(s)) => s,
                            _ => return Err(ParseError::UnexpectedTerm),
                        };
                        self.expect_punct(":")?;
                        fields.push((key, self.expr()?));
                        if self.punct("}") {
                            break;
                        }
                        self.expect_punct(",")?;
                    }
                }
                Ok(Expr::Tuple(fields))
            }
            Some(Tok::Punct("[")) => Ok(Expr::List(self.sequence("]")?)),
            Some(Tok::Punct("<<")) => {
                let items = self.sequence(">>")?;
                if items.is_empty() {
                    return Err(ParseError::EmptyBag);
                }
                Ok(Expr::Bag(items))
            }
            Some(Tok::Quoted(name)) => {
                let mut steps = vec![Step::Attr(name)];
                self.path_steps(&mut steps)?;
                Ok(Expr::Path(Path(steps)))
            }
            Some(Tok::Word(w)) => {
                if w.eq_ignore_ascii_case("TRUE") {
                    return Ok(Expr::Bool(true));
                }
                if w.eq_ignore_ascii_case("FALSE") {
                    return Ok(Expr::Bool(false));
                }
                if w.eq_ignore_ascii_case("NULL") {
                    return Ok(Expr::Null);
                }
                if self.peek() == Some(&Tok::Punct("(")) {
                    self.pos += 1;
                    let name = w.to_ascii_lowercase();
                    if !FUNCTIONS.contains(&name.as_str()) {
                        return Err(ParseError::UnknownFunction(name));
                    }
                    let args = self.sequence(")")?;
                    return Ok(Expr::Call(name, args));
                }
                let mut steps = vec![Step::Attr(w)];
                self.path_steps(&mut steps)?;
                Ok(Expr::Path(Path(steps)))
            }
            _ => Err(ParseError::UnexpectedTerm),
        }
    }

    /// Comma-separated expressions up to `close` (which may come at once).
    fn sequence(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut items = Vec::new();
        if self.punct(close) {
            return Ok(items);
        }
        loop {
            items.push(self.expr()?);
            if self.punct(close) {
                return Ok(items);
            }
            self.expect_punct(",")?;
        }
    }
}

/// Words that may follow a table name (so they are not an alias).
fn is_clause_keyword(w: &str) -> bool {
    ["WHERE", "SET", "REMOVE", "ORDER", "RETURNING"].iter().any(|k| k.eq_ignore_ascii_case(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(name: &str) -> Expr {
        Expr::Path(Path(vec![Step::Attr(name.into())]))
    }

    #[test]
    fn select_with_projection_index_where_and_order() {
        let s =
            parse(r#"select a, b.c, d[1] FROM "t"."idx" WHERE pk = ? AND x > 5 ORDER BY sk DESC"#).unwrap().statement;
        let Statement::Select(s) = s else { panic!("not a select: {s:?}") };
        assert_eq!(s.table, "t");
        assert_eq!(s.index.as_deref(), Some("idx"));
        assert_eq!(
            s.projection,
            Some(vec![
                Path(vec![Step::Attr("a".into())]),
                Path(vec![Step::Attr("b".into()), Step::Attr("c".into())]),
                Path(vec![Step::Attr("d".into()), Step::Index(1)]),
            ])
        );
        let c = s.condition.unwrap();
        let conj = c.conjuncts();
        assert_eq!(conj.len(), 2);
        assert_eq!(*conj[0], Expr::Compare(CompareOp::Eq, Box::new(path("pk")), Box::new(Expr::Param(0))));
        assert_eq!(s.order_by, vec![(Path(vec![Step::Attr("sk".into())]), true)]);
    }

    #[test]
    fn insert_update_delete_and_exists() {
        let s = parse(r#"INSERT INTO "t" VALUE {'pk': ?, 'n': -1.5, 's': <<'x','y'>>, 'l': [1, true, null]}"#)
            .unwrap()
            .statement;
        let Statement::Insert { table, value: Expr::Tuple(fields) } = s else { panic!("{s:?}") };
        assert_eq!(table, "t");
        assert_eq!(fields[0], ("pk".to_string(), Expr::Param(0)));
        assert_eq!(fields[1], ("n".to_string(), Expr::Num("-1.5".into())));
        assert_eq!(fields[2].1, Expr::Bag(vec![Expr::Str("x".into()), Expr::Str("y".into())]));
        let s = parse(r#"UPDATE "t" SET a = a + 1, b = 'x' REMOVE c WHERE pk = 'k' RETURNING MODIFIED NEW *"#)
            .unwrap()
            .statement;
        let Statement::Update { actions, returning, .. } = s else { panic!("{s:?}") };
        assert_eq!(actions.len(), 3);
        assert_eq!(actions[2], UpdateAction::Remove(Path(vec![Step::Attr("c".into())])));
        assert_eq!(returning, Some(Returning::ModifiedNew));
        let s =
            parse(r#"DELETE FROM "t" WHERE pk = 'k' AND attribute_exists(x) RETURNING ALL OLD *"#).unwrap().statement;
        assert!(matches!(s, Statement::Delete { returning: Some(Returning::AllOld), .. }));
        let s = parse(r#"EXISTS(SELECT * FROM "t" WHERE pk = 'k' AND x IS NOT MISSING)"#).unwrap().statement;
        assert!(matches!(s, Statement::Exists(_)));
    }

    #[test]
    fn dynamodb_error_texts() {
        let msg = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(
            msg(r#"SELECT * FROM "t" WHERE a = 1)"#),
            "Statement wasn't well formed, can't be processed: Unexpected token after expression"
        );
        assert_eq!(
            msg(r#"SELECT * FROM "t" WHERE"#),
            "Statement wasn't well formed, can't be processed: Unexpected term"
        );
        assert_eq!(msg(r#"SELECT * FROM "t" AS x"#), "Aliasing is not supported");
        assert_eq!(msg(r#"DELETE FROM "t" x WHERE a = 1"#), "Aliasing is not supported");
        assert_eq!(msg(r#"INSERT INTO "t" VALUE {'a': <<>>}"#), "Empty bags are not supported");
        assert_eq!(msg("SELECT * FROM t # x"), "Statement wasn't well formed, can't be processed: ");
        assert_eq!(msg("SELECT * FROM t WHERE frob(a)"), "Unrecognized function: frob");
        assert_eq!(parse("DELETE FROM t WHERE a = ? AND b IN [?, ?]").unwrap().parameters, 3);
        let deep = format!("SELECT * FROM t WHERE {}a = 1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(parse(&deep), Err(ParseError::TooDeep));
    }
}
