//! CSV cell typing: explicit `--types` hints, or inference that keeps
//! anything that is not a canonical number (zip codes, "007") a string.

use std::collections::HashMap;

use dynaburst_model::{AttributeValue, Number};

/// The type a CSV column is loaded as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeHint {
    S,
    N,
    Bool,
    Null,
    Ss,
    Ns,
    /// Plain JSON in the cell (objects to M, arrays to L).
    Json,
}

impl TypeHint {
    /// The name `--types` takes for it.
    pub fn name(self) -> &'static str {
        match self {
            TypeHint::S => "S",
            TypeHint::N => "N",
            TypeHint::Bool => "BOOL",
            TypeHint::Null => "NULL",
            TypeHint::Ss => "SS",
            TypeHint::Ns => "NS",
            TypeHint::Json => "JSON",
        }
    }
}

/// Column name to type.
pub type TypeHints = HashMap<String, TypeHint>;

/// How a CSV column's cells are typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// By `--types`.
    Given(TypeHint),
    /// From the first records' values: N when every one was a canonical
    /// number, else S.
    Inferred(TypeHint),
    /// `--all-strings`.
    Strings,
}

impl ColumnType {
    /// The attribute type the column's cells become (`--types` names).
    pub fn name(self) -> &'static str {
        match self {
            ColumnType::Given(h) | ColumnType::Inferred(h) => h.name(),
            ColumnType::Strings => "S",
        }
    }
}

/// Every CSV column's type, in header order, and how many records the
/// inferred ones were decided on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnTypes {
    pub columns: Vec<(String, ColumnType)>,
    pub records: usize,
}

impl ColumnTypes {
    /// Column name to the type its cells become (`S`, `N`, ...).
    pub fn by_name(&self) -> std::collections::BTreeMap<String, &'static str> {
        self.columns.iter().map(|(name, ty)| (name.clone(), ty.name())).collect()
    }
}

/// One line that says which type each CSV column was given and why, e.g.
/// "CSV column types: id N, zip S, age N (inferred from the first 3
/// records: N where every value was a canonical number); given: tags SS".
pub fn describe_column_types(types: &ColumnTypes) -> String {
    let list = |want: fn(&ColumnType) -> Option<&'static str>| -> Vec<String> {
        types.columns.iter().filter_map(|(n, t)| want(t).map(|ty| format!("{n} {ty}"))).collect()
    };
    let inferred = list(|t| matches!(t, ColumnType::Inferred(_)).then(|| t.name()));
    let given = list(|t| matches!(t, ColumnType::Given(_)).then(|| t.name()));
    let strings = list(|t| matches!(t, ColumnType::Strings).then(|| t.name()));
    let mut parts = Vec::new();
    if !inferred.is_empty() {
        parts.push(format!(
            "{} (inferred from the first {} records: N where every value was a canonical number; --types NAME:TYPE overrides)",
            inferred.join(", "),
            types.records
        ));
    }
    if !given.is_empty() {
        parts.push(format!("given by --types: {}", given.join(", ")));
    }
    if !strings.is_empty() {
        parts.push(format!("--all-strings: {}", strings.join(", ")));
    }
    format!("CSV column types: {}", parts.join("; "))
}

/// Parses `age:N,active:BOOL,tags:SS`.
pub fn parse_type_hints(text: &str) -> Result<TypeHints, String> {
    let mut out = TypeHints::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, ty)) = part.rsplit_once(':') else {
            return Err(format!("'{part}' is not NAME:TYPE (for example age:N)"));
        };
        let hint = match ty.to_ascii_uppercase().as_str() {
            "S" => TypeHint::S,
            "N" => TypeHint::N,
            "BOOL" => TypeHint::Bool,
            "NULL" => TypeHint::Null,
            "SS" => TypeHint::Ss,
            "NS" => TypeHint::Ns,
            "JSON" | "M" | "L" => TypeHint::Json,
            other => return Err(format!("unknown type '{other}' for {name}: use S, N, BOOL, NULL, SS, NS or JSON")),
        };
        out.insert(name.to_string(), hint);
    }
    Ok(out)
}

/// A cell with no hint: a number only when it is a canonical decimal that
/// prints back exactly as written (so "007", "1.50" and "+1" stay strings),
/// otherwise a string.
pub fn infer_cell(cell: &str) -> AttributeValue {
    if cell.len() <= 40 && cell.bytes().all(|b| b.is_ascii_digit() || b == b'-' || b == b'.') {
        if let Ok(n) = Number::parse(cell) {
            if n.to_string() == cell {
                return AttributeValue::N(n);
            }
        }
    }
    AttributeValue::S(cell.to_string())
}

fn set_members(cell: &str) -> Result<Vec<String>, String> {
    if cell.starts_with('[') {
        let v: Vec<serde_json::Value> =
            serde_json::from_str(cell).map_err(|e| format!("set is not a JSON array: {e}"))?;
        return v
            .into_iter()
            .map(|e| match e {
                serde_json::Value::String(s) => Ok(s),
                serde_json::Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("set member {other} is not a string or number")),
            })
            .collect();
    }
    Ok(cell.split(';').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
}

/// A cell with an explicit type. Sets are a JSON array or `;`-separated.
pub fn typed_cell(cell: &str, hint: TypeHint) -> Result<AttributeValue, String> {
    Ok(match hint {
        TypeHint::S => AttributeValue::S(cell.to_string()),
        TypeHint::N => AttributeValue::N(Number::parse(cell.trim()).map_err(|e| format!("'{cell}': {e}"))?),
        TypeHint::Bool => match cell.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "t" | "y" => AttributeValue::Bool(true),
            "false" | "0" | "no" | "f" | "n" => AttributeValue::Bool(false),
            _ => return Err(format!("'{cell}' is not a boolean (true/false, 1/0, yes/no)")),
        },
        TypeHint::Null => AttributeValue::Null,
        TypeHint::Ss => {
            let members = set_members(cell)?;
            let mut seen = std::collections::HashSet::new();
            let members: Vec<String> = members.into_iter().filter(|m| seen.insert(m.clone())).collect();
            if members.is_empty() {
                return Err("an empty set cannot be stored".to_string());
            }
            AttributeValue::Ss(members)
        }
        TypeHint::Ns => {
            let mut out: Vec<Number> = Vec::new();
            for m in set_members(cell)? {
                let n = Number::parse(&m).map_err(|e| format!("'{m}': {e}"))?;
                if !out.contains(&n) {
                    out.push(n);
                }
            }
            if out.is_empty() {
                return Err("an empty set cannot be stored".to_string());
            }
            AttributeValue::Ns(out)
        }
        TypeHint::Json => {
            let v: serde_json::Value = serde_json::from_str(cell).map_err(|e| format!("not JSON: {e}"))?;
            crate::json_to_value(v, 0).map_err(|e| e.0)?
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inference_keeps_non_canonical_numbers_as_strings() {
        assert_eq!(infer_cell("42"), AttributeValue::N(Number::parse("42").unwrap()));
        assert_eq!(infer_cell("-3.25"), AttributeValue::N(Number::parse("-3.25").unwrap()));
        for s in ["007", "02134", "1.50", "+1", "1e3", "12-34", "1.", ".5", "-0", "abc", ""] {
            assert_eq!(infer_cell(s), AttributeValue::S(s.to_string()), "{s}");
        }
    }

    #[test]
    fn hints_parse_and_type_cells() {
        let h = parse_type_hints("age:N, active:BOOL,tags:SS,zip:S").unwrap();
        assert_eq!(h["age"], TypeHint::N);
        assert_eq!(h["tags"], TypeHint::Ss);
        assert!(parse_type_hints("age").is_err());
        assert!(parse_type_hints("age:X").is_err());
        assert_eq!(typed_cell("007", TypeHint::N).unwrap().as_n().unwrap().to_string(), "7");
        assert_eq!(typed_cell("a;b;a", TypeHint::Ss).unwrap(), AttributeValue::Ss(vec!["a".into(), "b".into()]));
        assert_eq!(
            typed_cell("[\"x\",\"y\"]", TypeHint::Ss).unwrap(),
            AttributeValue::Ss(vec!["x".into(), "y".into()])
        );
        assert_eq!(typed_cell("yes", TypeHint::Bool).unwrap(), AttributeValue::Bool(true));
        assert!(typed_cell("maybe", TypeHint::Bool).is_err());
        assert!(typed_cell("", TypeHint::Ss).is_err());
    }
}
