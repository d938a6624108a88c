//! Condition expressions: every comparator and function, on matching and
//! mismatched types, nested paths, precedence and semantic errors.

use super::*;
use crate::{Comparator, Operand};
use dynaburst_model::ValueType;

/// An item holding one attribute of every type, plus nesting.
fn sample() -> Item {
    item(&[
        ("num", n("10")),
        ("str", s("apple")),
        ("bin", b(&[0x01, 0xff, 0x02])),
        ("yes", AttributeValue::Bool(true)),
        ("nul", AttributeValue::Null),
        ("strs", ss(&["red", "green"])),
        ("nums", ns(&["1", "2.5"])),
        ("bins", bs(&[&[1], &[2, 3]])),
        ("lst", l(vec![s("x"), n("7"), m(&[("k", s("v"))])])),
        ("mp", m(&[("inr", m(&[("deep", n("3"))])), ("arr", l(vec![n("0"), l(vec![s("z")])]))])),
        ("utf", s("é")),
    ])
}

/// Values of every type for the comparisons below.
fn ctx() -> Ctx {
    Ctx::new()
        .value(":n9", n("9"))
        .value(":n10", n("10.0"))
        .value(":n11", n("11"))
        .value(":s_apple", s("apple"))
        .value(":s_b", s("b"))
        .value(":s_B", s("B"))
        .value(":b_low", b(&[0x01]))
        .value(":b_high", b(&[0xff]))
        .value(":b_same", b(&[0x01, 0xff, 0x02]))
        .value(":true", AttributeValue::Bool(true))
        .value(":null", AttributeValue::Null)
        .value(":strs_swapped", ss(&["green", "red"]))
        .value(":nums_swapped", ns(&["2.50", "1"]))
        .value(":lst", l(vec![s("x"), n("7"), m(&[("k", s("v"))])]))
        .value(":s10", s("10"))
        .value(":n2", n("2"))
        .value(":n3", n("3"))
        .value(":n5", n("5"))
}

#[test]
fn equality_on_every_type() {
    let ctx = ctx();
    let item = sample();
    assert!(ctx.holds("num = :n10", &item));
    assert!(!ctx.holds("num = :n9", &item));
    assert!(ctx.holds("str = :s_apple", &item));
    assert!(ctx.holds("bin = :b_same", &item));
    assert!(ctx.holds("yes = :true", &item));
    assert!(ctx.holds("nul = :null", &item));
    // Sets compare as sets, numbers numerically inside them.
    assert!(ctx.holds("strs = :strs_swapped", &item));
    assert!(ctx.holds("nums = :nums_swapped", &item));
    assert!(ctx.holds("lst = :lst", &item));
    // Two paths.
    assert!(ctx.holds(
        "lst[1] = mp.inr.deep",
        &Item::from([
            ("lst".to_string(), l(vec![n("0"), n("3")])),
            ("mp".to_string(), m(&[("inr", m(&[("deep", n("3"))]))])),
        ])
    ));
}

#[test]
fn mismatched_types_are_unequal_and_unordered() {
    let ctx = ctx();
    let item = sample();
    // "10" the string is not 10 the number.
    assert!(!ctx.holds("num = :s10", &item));
    assert!(ctx.holds("num <> :s10", &item));
    for op in ["<", "<=", ">", ">="] {
        assert!(!ctx.holds(&format!("num {op} :s10"), &item), "num {op} :s10");
        assert!(!ctx.holds(&format!("str {op} :n9"), &item), "str {op} :n9");
        // Ordering is undefined for BOOL, NULL, sets, lists and maps: a
        // constant of those types is refused, an attribute of them makes
        // the comparison false.
        for (constant, operand_type) in [(":true", "BOOL"), (":null", "NULL"), (":strs_swapped", "SS"), (":lst", "L")] {
            assert_eq!(
                ctx.condition_error(&format!("yes {op} {constant}")),
                format!(
                    "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: {op}, operand type: {operand_type}"
                )
            );
        }
        assert!(!ctx.holds(&format!("yes {op} nul"), &item), "yes {op} nul");
        assert!(!ctx.holds(&format!("lst {op} strs"), &item), "lst {op} strs");
    }
    assert!(!ctx.holds("yes <> :true", &item));
}

#[test]
fn ordering_numbers_strings_and_binary() {
    let ctx = ctx();
    let item = sample();
    // Numeric, not lexicographic: 10 > 9.
    assert!(ctx.holds("num > :n9", &item));
    assert!(ctx.holds("num >= :n10", &item));
    assert!(ctx.holds("num <= :n10", &item));
    assert!(!ctx.holds("num < :n10", &item));
    assert!(ctx.holds("num < :n11", &item));
    assert!(!ctx.holds("num > :n11", &item));
    // Strings by UTF-8 bytes: "B" < "apple" < "b".
    assert!(ctx.holds("str < :s_b", &item));
    assert!(ctx.holds("str > :s_B", &item));
    assert!(ctx.holds("str >= :s_apple", &item));
    assert!(!ctx.holds("str < :s_apple", &item));
    // Binary by unsigned bytes: [01] < [01 ff 02] < [ff].
    assert!(ctx.holds("bin > :b_low", &item));
    assert!(ctx.holds("bin < :b_high", &item));
    assert!(ctx.holds("bin <= :b_same", &item));
    assert!(!ctx.holds("bin > :b_high", &item));
}

#[test]
fn missing_attributes_make_comparisons_false_except_not_equal() {
    let ctx = ctx();
    let empty = Item::new();
    for op in ["=", "<", "<=", ">", ">="] {
        assert!(!ctx.holds(&format!("absent {op} :n10"), &empty), "{op}");
        assert!(!ctx.holds(&format!(":n10 {op} absent"), &empty), "{op} reversed");
    }
    assert!(ctx.holds("absent <> :n10", &empty));
    assert!(ctx.holds("absent <> otr", &empty));
    assert!(!ctx.holds("absent BETWEEN :n9 AND :n11", &empty));
    assert!(!ctx.holds("absent IN (:n9, :n10)", &empty));
}

#[test]
fn between_is_inclusive_and_type_strict() {
    let ctx = ctx();
    let item = sample();
    assert!(ctx.holds("num BETWEEN :n9 AND :n11", &item));
    assert!(ctx.holds("num BETWEEN :n10 AND :n11", &item));
    assert!(ctx.holds("num BETWEEN :n9 AND :n10", &item));
    assert!(!ctx.holds(
        "num BETWEEN :n11 AND bound",
        &Item::from([("num".to_string(), n("10")), ("bound".to_string(), n("12")),])
    ));
    assert!(ctx.holds("str between :s_B and :s_b", &item));
    assert!(!ctx.holds("str BETWEEN :n9 AND :n11", &item));
    assert!(ctx.holds("bin BETWEEN :b_low AND :b_high", &item));
    // Bounds from paths of different types: false, not an error.
    assert!(!ctx.holds("num BETWEEN str AND :n11", &item));
}

#[test]
fn in_uses_semantic_equality() {
    let ctx = ctx();
    let item = sample();
    assert!(ctx.holds("num IN (:n9, :n10)", &item));
    assert!(!ctx.holds("num IN (:n9, :n11, :s10)", &item));
    assert!(ctx.holds("strs IN (:strs_swapped)", &item));
    assert!(ctx.holds("str IN (:s_b, str)", &item));
    assert!(!ctx.holds("str IN (absent)", &item));
}

#[test]
fn attribute_exists_and_not_exists_on_nested_paths() {
    let ctx = Ctx::new().name("#d", "deep");
    let item = sample();
    assert!(ctx.holds("attribute_exists(mp.inr.#d)", &item));
    assert!(ctx.holds("attribute_exists(mp.arr[1][0])", &item));
    assert!(!ctx.holds("attribute_exists(mp.arr[1][1])", &item));
    assert!(!ctx.holds("attribute_exists(mp.arr.x)", &item));
    assert!(ctx.holds("attribute_not_exists(mp.inr.otr)", &item));
    assert!(!ctx.holds("attribute_not_exists(lst[2].k)", &item));
    assert!(ctx.holds("attribute_not_exists(anything)", &Item::new()));
    assert!(!ctx.holds("attribute_exists(anything)", &Item::new()));
}

#[test]
fn attribute_type_checks_every_type() {
    let item = sample();
    let cases = [
        ("num", "N"),
        ("str", "S"),
        ("bin", "B"),
        ("yes", "BOOL"),
        ("nul", "NULL"),
        ("strs", "SS"),
        ("nums", "NS"),
        ("bins", "BS"),
        ("lst", "L"),
        ("mp", "M"),
    ];
    for (attribute, descriptor) in cases {
        for (_, other) in cases {
            let ctx = Ctx::new().value(":t", s(other));
            let expected = other == descriptor;
            assert_eq!(
                ctx.holds(&format!("attribute_type({attribute}, :t)"), &item),
                expected,
                "attribute_type({attribute}, {other})"
            );
        }
    }
    let ctx = Ctx::new().value(":t", s("S"));
    assert!(!ctx.holds("attribute_type(absent, :t)", &item));
    assert_eq!(ctx.condition("attribute_type(a.b, :t)"), Ok(Condition::AttributeType(path("a.b"), ValueType::S)));
}

#[test]
fn attribute_type_argument_errors() {
    assert_eq!(
        Ctx::new().value(":t", s("STRING")).condition_error("attribute_type(a, :t)"),
        "Invalid ConditionExpression: Invalid attribute type name found; type: STRING, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"
    );
    assert_eq!(
        Ctx::new().value(":t", n("1")).condition_error("attribute_type(a, :t)"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: attribute_type, operand type: N"
    );
    // A constant first argument is allowed (DynamoDB, as ScyllaDB's
    // Alternator suite found): "S" is a string.
    assert!(Ctx::new().value(":t", s("S")).holds("attribute_type(:t, :t)", &item(&[])));
    assert_eq!(
        Ctx::new().value(":t", s("S")).condition_error("attribute_type(size(a), :t)"),
        "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_type"
    );
}

#[test]
fn begins_with_strings_and_binary_only() {
    let ctx = Ctx::new()
        .value(":app", s("app"))
        .value(":apple_pie", s("apple pie"))
        .value(":b01", b(&[0x01]))
        .value(":bff", b(&[0xff]))
        .value(":empty", s(""));
    let item = sample();
    assert!(ctx.holds("begins_with(str, :app)", &item));
    assert!(ctx.holds("begins_with(str, :empty)", &item));
    assert!(!ctx.holds("begins_with(str, :apple_pie)", &item));
    assert!(ctx.holds("begins_with(bin, :b01)", &item));
    assert!(!ctx.holds("begins_with(bin, :bff)", &item));
    // Mismatched types and non-string attributes: false.
    assert!(!ctx.holds("begins_with(str, :b01)", &item));
    assert!(!ctx.holds("begins_with(num, :app)", &item));
    assert!(!ctx.holds("begins_with(strs, :app)", &item));
    assert!(!ctx.holds("begins_with(absent, :app)", &item));
    // Two paths.
    assert!(ctx.holds(
        "begins_with(str, prefix)",
        &Item::from([("str".to_string(), s("apple")), ("prefix".to_string(), s("ap")),])
    ));
}

#[test]
fn begins_with_constant_type_errors() {
    assert_eq!(
        Ctx::new().value(":n", n("1")).condition_error("begins_with(a, :n)"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"
    );
    assert_eq!(
        Ctx::new().value(":l", l(vec![])).condition_error("begins_with(:l, a)"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: L"
    );
}

#[test]
fn contains_on_strings_binary_sets_and_lists() {
    let ctx = Ctx::new()
        .value(":ppl", s("ppl"))
        .value(":red", s("red"))
        .value(":blue", s("blue"))
        .value(":n1", n("1.0"))
        .value(":n3", n("3"))
        .value(":bff02", b(&[0xff, 0x02]))
        .value(":b23", b(&[2, 3]))
        .value(":b02ff", b(&[0x02, 0xff]))
        .value(":seven", n("7"))
        .value(":kv", m(&[("k", s("v"))]))
        .value(":x", s("x"));
    let item = sample();
    assert!(ctx.holds("contains(str, :ppl)", &item));
    assert!(!ctx.holds("contains(str, :red)", &item));
    assert!(ctx.holds("contains(bin, :bff02)", &item));
    assert!(!ctx.holds("contains(bin, :b02ff)", &item));
    assert!(ctx.holds("contains(strs, :red)", &item));
    assert!(!ctx.holds("contains(strs, :blue)", &item));
    assert!(ctx.holds("contains(nums, :n1)", &item));
    assert!(!ctx.holds("contains(nums, :n3)", &item));
    assert!(ctx.holds("contains(bins, :b23)", &item));
    assert!(ctx.holds("contains(lst, :seven)", &item));
    assert!(ctx.holds("contains(lst, :kv)", &item));
    assert!(ctx.holds("contains(lst, :x)", &item));
    // Mismatched element types and non-container attributes: false.
    assert!(!ctx.holds("contains(strs, :n1)", &item));
    assert!(!ctx.holds("contains(nums, :red)", &item));
    assert!(!ctx.holds("contains(num, :n1)", &item));
    assert!(!ctx.holds("contains(mp, :x)", &item));
    assert!(!ctx.holds("contains(absent, :x)", &item));
}

#[test]
fn size_of_every_type() {
    let ctx = Ctx::new()
        .value(":0", n("0"))
        .value(":1", n("1"))
        .value(":2", n("2"))
        .value(":3", n("3"))
        .value(":5", n("5"))
        .value(":word", s("four"));
    let item = sample();
    assert!(ctx.holds("size(str) = :5", &item));
    // UTF-8 bytes, not characters.
    assert!(ctx.holds("size(utf) = :2", &item));
    assert!(ctx.holds("size(bin) = :3", &item));
    assert!(ctx.holds("size(strs) = :2", &item));
    assert!(ctx.holds("size(nums) = :2", &item));
    assert!(ctx.holds("size(bins) = :2", &item));
    assert!(ctx.holds("size(lst) = :3", &item));
    assert!(ctx.holds("size(mp) = :2", &item));
    assert!(ctx.holds("size(mp.arr[1]) = :1", &item));
    assert!(ctx.holds("size(:word) > :3", &item));
    assert!(ctx.holds("size(str) BETWEEN :3 AND :5", &item));
    assert!(ctx.holds("size(lst) IN (:1, :3)", &item));
    assert!(ctx.holds(":2 < size(lst)", &item));
    // Undefined for N, BOOL and NULL, and for missing attributes.
    for attribute in ["num", "yes", "nul", "absent"] {
        assert!(!ctx.holds(&format!("size({attribute}) >= :0"), &item), "{attribute}");
        assert!(ctx.holds(&format!("size({attribute}) <> :0"), &item), "{attribute}");
    }
}

#[test]
fn size_errors() {
    let ctx = Ctx::new().value(":n", n("1")).value(":t", AttributeValue::Bool(true));
    assert_eq!(
        ctx.condition_error("size(a)"),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"
    );
    assert_eq!(
        ctx.condition_error("size(:n) = :n"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: size, operand type: N"
    );
    assert_eq!(
        ctx.condition_error("size(:t) = :n"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: size, operand type: BOOL"
    );
    assert_eq!(
        ctx.condition_error("size(size(a)) = :n"),
        "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: size, operand type: N"
    );
    assert_eq!(
        ctx.condition_error("size(a, b) = :n"),
        "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: size, number of operands: 2"
    );
}

#[test]
fn nested_paths_and_list_indexes() {
    let ctx = Ctx::new().name("#m", "mp").name("#a", "arr").value(":z", s("z")).value(":v", s("v"));
    let sample_item = sample();
    assert!(ctx.holds("#m.#a[1][0] = :z", &sample_item));
    assert!(ctx.holds("mp.arr[1][0] = :z", &sample_item));
    assert!(ctx.holds("lst[2].k = :v", &sample_item));
    assert!(!ctx.holds("lst[3].k = :v", &sample_item));
    assert!(!ctx.holds("lst.k = :v", &sample_item));
    assert!(!ctx.holds("mp[0] = :v", &sample_item));
    assert_eq!(
        ctx.condition("#m.#a[1][0] = :z"),
        Ok(Condition::Compare {
            left: Operand::Path(path("mp.arr[1][0]")),
            op: Comparator::Eq,
            right: Operand::Value(s("z")),
        })
    );
    // A name with dots from a placeholder is one step.
    let dotted = Ctx::new().name("#d", "a.b").value(":v", s("v"));
    let dotted_item = item(&[("a.b", s("v")), ("a", m(&[("b", s("otr"))]))]);
    assert!(dotted.holds("#d = :v", &dotted_item));
}

#[test]
fn precedence_and_binds_tighter_than_or() {
    let ctx = Ctx::new().value(":x", n("1")).value(":y", n("2")).value(":z", n("3"));
    let parsed = ctx.condition("a = :x OR b = :y AND c = :z");
    let compare = |name: &str, value: AttributeValue| Condition::Compare {
        left: Operand::Path(path(name)),
        op: Comparator::Eq,
        right: Operand::Value(value),
    };
    assert_eq!(
        parsed,
        Ok(Condition::Or(
            vec![compare("a", n("1")), Condition::And(vec![compare("b", n("2")), compare("c", n("3"))]),]
        ))
    );
    // a matches, b/c do not: true under OR-of-AND, false under AND-of-OR.
    let only_a = item(&[("a", n("1"))]);
    assert!(ctx.holds("a = :x OR b = :y AND c = :z", &only_a));
    assert!(!ctx.holds("(a = :x OR b = :y) AND c = :z", &only_a));
    // Only b and c match.
    let b_and_c = item(&[("b", n("2")), ("c", n("3"))]);
    assert!(ctx.holds("a = :x OR b = :y AND c = :z", &b_and_c));
    // Only b: the AND fails and a fails.
    assert!(!ctx.holds("a = :x OR b = :y AND c = :z", &item(&[("b", n("2"))])));
}

#[test]
fn precedence_not_binds_tighter_than_and() {
    let ctx = Ctx::new().value(":x", n("1")).value(":y", n("2"));
    // NOT applies to a = :x only.
    let parsed = ctx.condition("NOT a = :x AND b = :y").expect("parses");
    assert!(matches!(&parsed, Condition::And(parts) if matches!(parts[0], Condition::Not(_))));
    let neither = item(&[("a", n("5")), ("b", n("2"))]);
    assert!(ctx.holds("NOT a = :x AND b = :y", &neither));
    assert!(!ctx.holds("NOT (a = :x OR b = :y)", &neither));
    assert!(ctx.holds("not not b = :y", &neither));
}

#[test]
fn keywords_are_case_insensitive_functions_are_not() {
    let ctx = Ctx::new().value(":x", n("1")).value(":lo", n("0")).value(":hi", n("9"));
    let one = item(&[("a", n("1")), ("b", n("5"))]);
    assert!(ctx.holds("a = :x and b between :lo AnD :hi or NoT a in (:x)", &one));
    assert_eq!(
        ctx.condition_error("ATTRIBUTE_EXISTS(a)"),
        "Invalid ConditionExpression: Invalid function name; function: ATTRIBUTE_EXISTS"
    );
}

#[test]
fn function_misuse_errors() {
    let ctx = Ctx::new().value(":v", s("v"));
    assert_eq!(
        ctx.condition_error("attribute_exists(a) = :v"),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: attribute_exists"
    );
    assert_eq!(
        ctx.condition_error("contains(begins_with(a, :v), :v)"),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: begins_with"
    );
    assert_eq!(ctx.condition_error("foo(a) = :v"), "Invalid ConditionExpression: Invalid function name; function: foo");
    assert_eq!(ctx.condition_error("bar(a)"), "Invalid ConditionExpression: Invalid function name; function: bar");
    assert_eq!(
        ctx.condition_error("a = if_not_exists(a, :v)"),
        "Invalid ConditionExpression: The function is not allowed in a condition expression; function: if_not_exists"
    );
    assert_eq!(
        ctx.condition_error("attribute_exists(:v)"),
        "Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists"
    );
    assert_eq!(
        ctx.condition_error("attribute_not_exists(a, b)"),
        "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: attribute_not_exists, number of operands: 2"
    );
    assert_eq!(
        ctx.condition_error("contains(a)"),
        "Invalid ConditionExpression: Incorrect number of operands for operator or function; operator or function: contains, number of operands: 1"
    );
}

#[test]
fn operands_must_be_distinct() {
    let ctx = Ctx::new().name("#a", "a");
    assert_eq!(
        ctx.condition_error("a.b = a.b"),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [a, b]"
    );
    assert_eq!(
        ctx.condition_error("#a[1] >= a[1]"),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: >=, first operand: [a, [1]]"
    );
    assert_eq!(
        ctx.condition_error("begins_with(a, #a)"),
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: begins_with, first operand: [a]"
    );
}

#[test]
fn between_constant_bounds_are_checked() {
    let ctx = Ctx::new().value(":one", n("1")).value(":five", n("5")).value(":s", s("a"));
    assert_eq!(
        ctx.condition_error("a BETWEEN :five AND :one"),
        "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {N:5}, upper bound operand: AttributeValue: {N:1}"
    );
    assert_eq!(
        ctx.condition_error("a BETWEEN :one AND :s"),
        "Invalid ConditionExpression: The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {N:1}, upper bound operand: AttributeValue: {S:a}"
    );
    assert!(ctx.condition("a BETWEEN :one AND :one").is_ok());
}

#[test]
fn redundant_parentheses_are_rejected() {
    let ctx = Ctx::new().value(":v", n("1"));
    let message = "Invalid ConditionExpression: The expression has redundant parentheses;";
    assert_eq!(ctx.condition_error("((a = :v))"), message);
    assert_eq!(ctx.condition_error("((a)) = :v"), message);
    assert_eq!(ctx.condition_error("a = ((:v))"), message);
    // One level, or parentheses around different constructs, are fine.
    assert!(ctx.condition("(a = :v)").is_ok());
    assert!(ctx.condition("((a) = :v)").is_ok());
    assert!(ctx.condition("((a = :v) AND (b = :v))").is_ok());
    assert!(ctx.condition("(NOT (a = :v))").is_ok());
    assert!(ctx.condition("(attribute_exists(a))").is_ok());
}

#[test]
fn filter_expressions_name_themselves() {
    let ctx = Ctx::new();
    assert_eq!(
        ctx.filter("size(a)").map(|_| ()),
        Err("Invalid FilterExpression: The function is not allowed to be used this way in an expression; function: size".to_string())
    );
}

#[test]
fn reserved_words_are_rejected_as_bare_names() {
    let ctx = Ctx::new().value(":v", s("v")).name("#n", "name");
    assert_eq!(
        ctx.condition_error("name = :v"),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: name"
    );
    // Case is preserved in the message; nested steps are checked too.
    assert_eq!(
        ctx.condition_error("a.Status = :v"),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: Status"
    );
    assert_eq!(
        ctx.condition_error("attribute_exists(a[0].DATA)"),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: DATA"
    );
    assert_eq!(
        ctx.filter("size = :v").map(|_| ()),
        Err("Invalid FilterExpression: Attribute name is a reserved keyword; reserved keyword: size".to_string())
    );
    // Through a placeholder a reserved word is fine; so are function names.
    assert!(ctx.condition("#n = :v AND size(#n) > :v").is_ok());
    assert!(ctx.condition("username = :v").is_ok());
}

#[test]
fn semantic_error_priority_matches_dynamodb() {
    let ctx = Ctx::new().value(":v", s("v"));
    // Unknown functions beat misuse, which beats reserved words, which beat
    // undefined placeholders.
    assert_eq!(
        ctx.condition_error("size(name) AND foo(a)"),
        "Invalid ConditionExpression: Invalid function name; function: foo"
    );
    assert_eq!(
        ctx.condition_error("name = :undefined AND size(a)"),
        "Invalid ConditionExpression: The function is not allowed to be used this way in an expression; function: size"
    );
    assert_eq!(
        ctx.condition_error("#undefined = :v AND year = :v"),
        "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: year"
    );
    // Redundant parentheses beat everything.
    assert_eq!(
        ctx.condition_error("((foo(name)))"),
        "Invalid ConditionExpression: The expression has redundant parentheses;"
    );
}

/// Cases ScyllaDB's Alternator suite (written against DynamoDB) found.
#[test]
fn constants_dynamodb_orders_or_types_as_it_does() {
    let ctx = Ctx::new()
        .value(":l", AttributeValue::L(vec![n("1")]))
        .value(":b", AttributeValue::Bool(true))
        .value(":v", n("1"))
        .value(":t", AttributeValue::S("N".into()))
        .value(":s", AttributeValue::S("S".into()));
    // A list or a Boolean cannot be ordered: an error, not a false condition.
    for (text, operator, operand_type) in [
        ("a < :l", "<", "L"),
        (":l >= a", ">=", "L"),
        ("a <= :b", "<=", "BOOL"),
        ("a BETWEEN :l AND :v", "BETWEEN", "L"),
    ] {
        assert_eq!(
            ctx.condition_error(text),
            format!(
                "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: {operator}, operand type: {operand_type}"
            )
        );
    }
    // Equality takes any type.
    assert!(ctx.condition("a = :l").is_ok());
    // attribute_type of a constant is decided by the constant.
    let empty = item(&[]);
    assert!(ctx.holds("attribute_type(:v, :t)", &empty));
    assert!(!ctx.holds("attribute_type(:v, :s)", &empty));
    // A name starts with a letter.
    assert_eq!(ctx.condition_error("_a = :v"), "Invalid ConditionExpression: Syntax error; token: \"_\", near: \"_a\"");
    // In a key condition, attribute_type keeps its path rule (a constant is
    // not folded away there).
    assert_eq!(
        ctx.key_condition("pk = :v AND attribute_type(:v, :t)").expect_err("refused"),
        "Invalid KeyConditionExpression: Operator or function requires a document path; operator or function: attribute_type"
    );
}
