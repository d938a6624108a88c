//! Update expressions: every action, functions, arithmetic, ordering,
//! parse-time and apply-time errors (which must leave the item unchanged).

use super::*;
use crate::{SetValue, UpdateAction, UpdateOperand};

fn ctx() -> Ctx {
    Ctx::new()
        .value(":one", n("1"))
        .value(":two", n("2"))
        .value(":s", s("text"))
        .value(":list", l(vec![s("x")]))
        .value(":empty", l(vec![]))
        .value(":ss", ss(&["b", "c"]))
        .value(":ns", ns(&["2", "3"]))
        .value(":bs", bs(&[&[2], &[3]]))
        .value(":map", m(&[("k", s("v"))]))
        .value(":big", n("9E+125"))
}

#[test]
fn set_top_level_nested_and_list_elements() {
    let before = item(&[("a", n("0")), ("m", m(&[("k", s("old"))])), ("l", l(vec![s("p"), s("q")]))]);
    let after = ctx().applied("SET a = :s, m.k = :one, m.extra = :two, l[1] = :s, fresh = :map", &before);
    assert_eq!(
        after,
        Ok(item(&[
            ("a", s("text")),
            ("m", m(&[("k", n("1")), ("extra", n("2"))])),
            ("l", l(vec![s("p"), s("text")])),
            ("fresh", m(&[("k", s("v"))])),
        ]))
    );
}

#[test]
fn set_past_the_end_of_a_list_appends_in_index_order() {
    let before = item(&[("l", l(vec![n("0")]))]);
    let after = ctx().applied("SET l[9] = :two, l[5] = :one", &before);
    assert_eq!(after, Ok(item(&[("l", l(vec![n("0"), n("1"), n("2")]))])));
}

#[test]
fn values_come_from_the_item_before_the_update() {
    // Swapping two attributes works because both values are read first.
    let before = item(&[("a", n("1")), ("b", n("2"))]);
    assert_eq!(ctx().applied("SET a = b, b = a", &before), Ok(item(&[("a", n("2")), ("b", n("1"))])));
}

#[test]
fn dynalite_nested_update_scenario() {
    // From dynalite's updateItem tests (recorded against DynamoDB).
    let key = s("key");
    let before = item(&[
        ("a", key.clone()),
        ("b", m(&[("a", n("1")), ("b", n("2")), ("c", n("3"))])),
        ("c", l(vec![n("1"), n("3")])),
    ]);
    let ctx = Ctx::new().value(":a", n("2")).value(":b", ss(&["a"]));
    let after = ctx
        .applied("set b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a - b.b, c[2] = b.c add c[8] :b, c[6] :a", &before);
    assert_eq!(
        after,
        Ok(item(&[
            ("a", key.clone()),
            ("b", m(&[("a", key.clone()), ("b", n("2")), ("c", n("4"))])),
            ("c", l(vec![n("1"), key, n("3"), n("-1"), n("2"), ss(&["a"])])),
        ]))
    );
}

#[test]
fn if_not_exists() {
    let ctx = ctx();
    let before = item(&[("a", n("5"))]);
    assert_eq!(
        ctx.applied("SET a = if_not_exists(a, :one), b = if_not_exists(b, :two)", &before),
        Ok(item(&[("a", n("5")), ("b", n("2"))]))
    );
    // Nested if_not_exists and arithmetic on it (a counter).
    assert_eq!(
        ctx.applied("SET c = if_not_exists(c, if_not_exists(a, :one)) + :two", &before),
        Ok(item(&[("a", n("5")), ("c", n("7"))]))
    );
    assert_eq!(ctx.applied("SET cnt = if_not_exists(cnt, :one) + :one", &Item::new()), Ok(item(&[("cnt", n("2"))])));
    assert_eq!(
        ctx.update("SET a = if_not_exists(a, :one)").map(|u| u.actions),
        Ok(vec![UpdateAction::Set {
            path: path("a"),
            value: SetValue::Operand(UpdateOperand::IfNotExists(path("a"), Box::new(UpdateOperand::Value(n("1"))))),
        }])
    );
}

#[test]
fn list_append_in_both_orders() {
    let ctx = ctx();
    let before = item(&[("l", l(vec![s("a"), s("b")]))]);
    assert_eq!(
        ctx.applied("SET l = list_append(l, :list)", &before),
        Ok(item(&[("l", l(vec![s("a"), s("b"), s("x")]))]))
    );
    assert_eq!(
        ctx.applied("SET l = list_append(:list, l)", &before),
        Ok(item(&[("l", l(vec![s("x"), s("a"), s("b")]))]))
    );
    assert_eq!(
        ctx.applied("SET n = list_append(if_not_exists(n, :empty), :list)", &Item::new()),
        Ok(item(&[("n", l(vec![s("x")]))]))
    );
    assert_eq!(
        ctx.applied("SET l = list_append(l, a)", &item(&[("l", l(vec![])), ("a", s("no"))])),
        Err("An operand in the update expression has an incorrect data type".to_string())
    );
}

#[test]
fn arithmetic() {
    let ctx = ctx();
    let before = item(&[("a", n("10")), ("b", n("0.5"))]);
    assert_eq!(
        ctx.applied("SET c = a + b, d = a - :two, e = :one - a", &before),
        Ok(item(&[("a", n("10")), ("b", n("0.5")), ("c", n("10.5")), ("d", n("8")), ("e", n("-9"))]))
    );
    assert_eq!(
        ctx.applied("SET c = a + x", &before),
        Err("The provided expression refers to an attribute that does not exist in the item".to_string())
    );
    assert_eq!(
        ctx.applied("SET c = a + x", &item(&[("a", n("1")), ("x", s("1"))])),
        Err("An operand in the update expression has an incorrect data type".to_string())
    );
    assert_eq!(
        ctx.applied("SET a = :one, b = :big + :big", &before),
        Err("Number overflow. Attempting to store a number with magnitude larger than supported range".to_string())
    );
    // 9E+125 + 10 needs 126 significant digits.
    assert_eq!(
        ctx.applied("SET b = a + :big", &before),
        Err("Attempting to store more than 38 significant digits in a Number".to_string())
    );
}

#[test]
fn set_from_a_missing_attribute_fails() {
    assert_eq!(
        ctx().applied("SET a = b", &Item::new()),
        Err("The provided expression refers to an attribute that does not exist in the item".to_string())
    );
}

#[test]
fn set_requires_existing_parents_of_the_right_kind() {
    let before = item(&[("s", s("x")), ("m", m(&[("1", s("a"))])), ("l", l(vec![s("a")]))]);
    let ctx = ctx().name("#1", "1");
    for text in
        ["SET y.a = :one", "SET y[1] = :one", "SET s.a = :one", "SET m[0] = :one", "SET l.#1 = :one", "SET s[0] = :one"]
    {
        assert_eq!(
            ctx.applied(text, &before),
            Err("The document path provided in the update expression is invalid for update".to_string()),
            "{text}"
        );
    }
}

#[test]
fn remove_attributes_nested_values_and_list_elements() {
    let before = item(&[
        ("a", n("1")),
        ("m", m(&[("k", s("v")), ("j", s("w"))])),
        ("l", l(vec![s("0"), s("1"), s("2"), s("3")])),
    ]);
    let ctx = ctx();
    assert_eq!(
        ctx.applied("REMOVE a, m.k, l[1]", &before),
        Ok(item(&[("m", m(&[("j", s("w"))])), ("l", l(vec![s("0"), s("2"), s("3")]))]))
    );
    // Several indexes of one list refer to the original positions.
    assert_eq!(
        ctx.applied("REMOVE l[0], l[2]", &before).map(|after| after.get("l").cloned()),
        Ok(Some(l(vec![s("1"), s("3")])))
    );
    // Missing targets are ignored.
    assert_eq!(ctx.applied("REMOVE nothing, m.nothing, l[10]", &before), Ok(before.clone()));
    // ...but their parents must exist and have the right kind.
    for text in ["REMOVE y.a", "REMOVE a.b", "REMOVE m[0]", "REMOVE l.x"] {
        assert_eq!(
            ctx.applied(text, &before),
            Err("The document path provided in the update expression is invalid for update".to_string()),
            "{text}"
        );
    }
}

#[test]
fn add_numbers_and_sets() {
    let ctx = ctx();
    let before =
        item(&[("n", n("5")), ("strs", ss(&["a", "b"])), ("nums", ns(&["1", "2"])), ("bins", bs(&[&[1], &[2]]))]);
    assert_eq!(
        ctx.applied("ADD n :two, strs :ss, nums :ns, bins :bs, fresh :one, fresh_set :ss", &before),
        Ok(item(&[
            ("n", n("7")),
            ("strs", ss(&["a", "b", "c"])),
            ("nums", ns(&["1", "2", "3"])),
            ("bins", bs(&[&[1], &[2], &[3]])),
            ("fresh", n("1")),
            ("fresh_set", ss(&["b", "c"])),
        ]))
    );
    for text in ["ADD strs :ns", "ADD n :ss", "ADD nums :one"] {
        assert_eq!(
            ctx.applied(text, &before),
            Err("An operand in the update expression has an incorrect data type".to_string()),
            "{text}"
        );
    }
    assert_eq!(
        ctx.applied("ADD n :big, n2 :big", &item(&[("n", n("2E+125"))])),
        Err("Number overflow. Attempting to store a number with magnitude larger than supported range".to_string())
    );
    // Nested targets: the parent must exist.
    assert_eq!(ctx.applied("ADD m.k :one", &item(&[("m", m(&[]))])), Ok(item(&[("m", m(&[("k", n("1"))]))])));
    assert_eq!(
        ctx.applied("ADD y.k :one", &Item::new()),
        Err("The document path provided in the update expression is invalid for update".to_string())
    );
}

#[test]
fn add_and_delete_operand_types_are_checked_when_parsing() {
    let ctx = Ctx::new()
        .value(":s", s("a"))
        .value(":n", n("1"))
        .value(":b", b(&[1]))
        .value(":null", AttributeValue::Null)
        .value(":bool", AttributeValue::Bool(false))
        .value(":m", m(&[]))
        .value(":l", l(vec![]));
    for (action, value, type_name) in [
        ("ADD", ":s", "STRING"),
        ("ADD", ":b", "BINARY"),
        ("ADD", ":null", "NULL"),
        ("ADD", ":bool", "BOOLEAN"),
        ("ADD", ":m", "MAP"),
        ("ADD", ":l", "LIST"),
        ("DELETE", ":n", "NUMBER"),
        ("DELETE", ":s", "STRING"),
        ("DELETE", ":l", "LIST"),
    ] {
        assert_eq!(
            ctx.update_error(&format!("{action} a {value}")),
            format!(
                "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: {action}, operand type: {type_name}"
            )
        );
    }
}

#[test]
fn delete_from_sets() {
    let ctx = ctx();
    let before = item(&[("strs", ss(&["a", "b", "c"])), ("nums", ns(&["2", "3"])), ("n", n("1"))]);
    assert_eq!(
        ctx.applied("DELETE strs :ss, nums :ns, absent :ss", &before),
        Ok(item(&[("strs", ss(&["a"])), ("n", n("1"))]))
    );
    assert_eq!(
        ctx.applied("DELETE strs :ns", &before),
        Err("An operand in the update expression has an incorrect data type".to_string())
    );
    assert_eq!(
        ctx.applied("DELETE n :ns", &before),
        Err("An operand in the update expression has an incorrect data type".to_string())
    );
    assert_eq!(
        ctx.applied("DELETE y.k :ss", &before),
        Err("The document path provided in the update expression is invalid for update".to_string())
    );
}

#[test]
fn errors_leave_the_item_unchanged() {
    // `applied` asserts the item is untouched whenever apply fails; these
    // fail in the last action, after earlier ones would have changed it.
    let before = item(&[("a", n("1")), ("s", s("x")), ("strs", ss(&["a"]))]);
    let ctx = ctx();
    for text in [
        "SET a = :two, b = s + :one",
        "SET a = :two REMOVE strs ADD s :one",
        "REMOVE a, strs DELETE s :ss",
        "SET a = :two, z.y = :one",
    ] {
        assert!(ctx.applied(text, &before).is_err(), "{text}");
    }
}

#[test]
fn clauses_in_any_order_and_case() {
    let before = item(&[("a", n("1")), ("b", n("1")), ("strs", ss(&["b"]))]);
    assert_eq!(
        ctx().applied("delete strs :ss add a :one REMOVE b set c = :s", &before),
        Ok(item(&[("a", n("2")), ("c", s("text"))]))
    );
}

#[test]
fn each_clause_only_once() {
    let ctx = ctx();
    assert_eq!(
        ctx.update_error("SET a = :one SET b = :two"),
        "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"
    );
    assert_eq!(
        ctx.update_error("remove a set b = c remove d"),
        "Invalid UpdateExpression: The \"REMOVE\" section can only be used once in an update expression;"
    );
    assert_eq!(
        ctx.update_error("ADD a :one SET b = c ADD d :one"),
        "Invalid UpdateExpression: The \"ADD\" section can only be used once in an update expression;"
    );
    assert_eq!(
        ctx.update_error("DELETE a :ss DELETE d :ss"),
        "Invalid UpdateExpression: The \"DELETE\" section can only be used once in an update expression;"
    );
}

#[test]
fn overlapping_and_conflicting_paths() {
    let ctx = ctx().name("#c", "c").name("#d", "[3]");
    assert_eq!(
        ctx.update_error("SET a = :one REMOVE a.b"),
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]"
    );
    assert_eq!(
        ctx.update_error("SET a = :one, a = :two"),
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a]"
    );
    // dynalite's cases, recorded against DynamoDB.
    assert_eq!(
        ctx.update_error("set d[1] = a, d.b = a, c[1].a = a, #c = if_not_exists(a, :one)"),
        "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [c, [1], a], path two: [c]"
    );
    assert_eq!(
        ctx.update_error("set #c[3].#d = a, #c.#d[3] = if_not_exists(a, :one)"),
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [c, [3], [3]], path two: [c, [3], [3]]"
    );
    assert_eq!(
        ctx.update_error("remove a.#c set a[1] = b"),
        "Invalid UpdateExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, c], path two: [a, [1]]"
    );
    // Sibling list elements and map keys are independent.
    assert!(ctx.update("SET a[0] = :one, a[1] = :two REMOVE b.x, b.y").is_ok());
}

#[test]
fn function_and_operand_errors() {
    let ctx = ctx();
    assert_eq!(
        ctx.update_error("SET a = if_not_exists(:one, b)"),
        "Invalid UpdateExpression: Operator or function requires a document path; operator or function: if_not_exists"
    );
    assert_eq!(
        ctx.update_error("SET a = if_not_exists(a)"),
        "Invalid UpdateExpression: Incorrect number of operands for operator or function; operator or function: if_not_exists, number of operands: 1"
    );
    assert_eq!(
        ctx.update_error("SET a = list_append(:s, a)"),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: S"
    );
    assert_eq!(
        ctx.update_error("SET a = a + :s"),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S"
    );
    assert_eq!(
        ctx.update_error("SET a = :ss - a"),
        "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: -, operand type: SS"
    );
    assert_eq!(
        ctx.update_error("SET a = size(b)"),
        "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"
    );
    assert_eq!(
        ctx.update_error("SET a = attribute_exists(b)"),
        "Invalid UpdateExpression: The function is not allowed in an update expression; function: attribute_exists"
    );
    assert_eq!(
        ctx.update_error("SET a = if_not_exist(a, :one)"),
        "Invalid UpdateExpression: Invalid function name; function: if_not_exist"
    );
    assert_eq!(
        ctx.update_error("SET a = if_not_exists(a, list_append(a, :list))"),
        "Invalid UpdateExpression: Only if_not_exists() function can be nested"
    );
}

#[test]
fn update_syntax_errors() {
    let ctx = ctx();
    assert_eq!(
        ctx.update_error("set a = b + c + d"),
        "Invalid UpdateExpression: Syntax error; token: \"+\", near: \"c + d\""
    );
    assert_eq!(ctx.update_error("SET a"), "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \"a\"");
    assert_eq!(
        ctx.update_error("whatever"),
        "Invalid UpdateExpression: Syntax error; token: \"whatever\", near: \"whatever\""
    );
    assert_eq!(ctx.update_error("ADD a b"), "Invalid UpdateExpression: Syntax error; token: \"b\", near: \"a b\"");
    assert_eq!(
        ctx.update_error("SET a = b * c"),
        "Invalid UpdateExpression: Syntax error; token: \"*\", near: \"b * c\""
    );
    assert_eq!(
        ctx.update_error("SET :one = b"),
        "Invalid UpdateExpression: Syntax error; token: \":one\", near: \"SET :one =\""
    );
    assert_eq!(
        ctx.update_error("set a = (b.c).d + e"),
        "Invalid UpdateExpression: Syntax error; token: \".\", near: \").d\""
    );
    assert_eq!(
        ctx.update_error("SET a = ((b + c))"),
        "Invalid UpdateExpression: The expression has redundant parentheses;"
    );
    assert!(ctx.update("SET a = (b + c), d = (e) - (f)").is_ok());
}

#[test]
fn reserved_words_in_updates() {
    let ctx = Ctx::new().name("#c", "c").value(":c", s("c"));
    // dynalite: reported before the duplicate SET section.
    assert_eq!(
        ctx.update_error(" set #c = :c set abOrt = true "),
        "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: abOrt"
    );
    assert_eq!(
        ctx.update_error(" remove Absolute "),
        "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: Absolute"
    );
}

#[test]
fn top_level_names_and_paths() {
    let update = ctx()
        .name("#k", "key")
        .update("SET a.b = :one, #k = :two, a.c = :one REMOVE l[0] ADD n :one DELETE strs :ss")
        .expect("parses");
    assert_eq!(update.top_level_names(), vec!["a", "key", "l", "n", "strs"]);
    assert_eq!(update.paths(), vec![path("a.b"), path("key"), path("a.c"), path("l[0]"), path("n"), path("strs")]);
}
