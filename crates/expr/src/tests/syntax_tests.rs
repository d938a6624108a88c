//! Syntax errors: exact messages, including DynamoDB's `near` excerpt.

use super::*;

fn ctx() -> Ctx {
    Ctx::new().value(":v", s("v")).value(":w", s("w")).value(":hashId", s("h"))
}

#[test]
fn end_of_input_errors_show_the_previous_token() {
    // Real DynamoDB: `foo` -> token "<EOF>", near "foo".
    assert_eq!(
        ctx().condition_error("foo"),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"foo\""
    );
    assert_eq!(
        ctx().condition_error("a ="),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"=\""
    );
    // Trailing whitespace is part of the excerpt, as DynamoDB shows it.
    assert_eq!(
        ctx().condition_error("a = "),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"= \""
    );
    assert_eq!(
        ctx().condition_error("a = :v AND"),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"AND\""
    );
    assert_eq!(
        ctx().condition_error("NOT a"),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"a\""
    );
    assert_eq!(
        ctx().condition_error("attribute_exists(a"),
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"a\""
    );
}

#[test]
fn unexpected_tokens_show_their_neighbours() {
    assert_eq!(
        ctx().condition_error("a = :v b = :w"),
        "Invalid ConditionExpression: Syntax error; token: \"b\", near: \":v b =\""
    );
    assert_eq!(
        ctx().condition_error("a == :v"),
        "Invalid ConditionExpression: Syntax error; token: \"=\", near: \"== :v\""
    );
    assert_eq!(
        ctx().condition_error("a AND b = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"AND\", near: \"a AND b\""
    );
    assert_eq!(
        ctx().condition_error("a = :v!"),
        "Invalid ConditionExpression: Syntax error; token: \"!\", near: \":v!\""
    );
    assert_eq!(
        ctx().condition_error("user-id = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"-\", near: \"user-id\""
    );
    assert_eq!(
        ctx().condition_error(") = :v"),
        "Invalid ConditionExpression: Syntax error; token: \")\", near: \") =\""
    );
    assert_eq!(
        ctx().condition_error("a = \"v\""),
        "Invalid ConditionExpression: Syntax error; token: \"\"v\"\", near: \"= \"v\"\""
    );
    assert_eq!(
        ctx().condition_error("a IN ()"),
        "Invalid ConditionExpression: Syntax error; token: \")\", near: \"()\""
    );
    assert_eq!(
        ctx().condition_error("a BETWEEN :v :w"),
        "Invalid ConditionExpression: Syntax error; token: \":w\", near: \":v :w\""
    );
    // A grouped condition is not an operand.
    assert_eq!(
        ctx().condition_error("(a = :v) = :w"),
        "Invalid ConditionExpression: Syntax error; token: \"=\", near: \") = :w\""
    );
    // A condition is not a function argument.
    assert_eq!(
        ctx().condition_error("contains(a = :v, :w)"),
        "Invalid ConditionExpression: Syntax error; token: \"=\", near: \"a = :v\""
    );
}

#[test]
fn paths_must_be_well_formed() {
    assert_eq!(
        ctx().condition_error("a.1 = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"1\", near: \".1 =\""
    );
    assert_eq!(
        ctx().condition_error("a[01] = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"1\", near: \"01]\""
    );
    assert_eq!(
        ctx().condition_error("a[x] = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"x\", near: \"[x]\""
    );
    assert_eq!(
        ctx().condition_error("#a(b) = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"(\", near: \"#a(b\""
    );
    assert_eq!(
        ctx().condition_error("a[99999999999999999999999] = :v"),
        "Invalid ConditionExpression: List index is not within the allowable range"
    );
}

#[test]
fn messages_name_the_expression_kind() {
    assert_eq!(
        ctx().key_condition("pk = :hashId a").map(|_| ()),
        Err("Invalid KeyConditionExpression: Syntax error; token: \"a\", near: \":hashId a\"".to_string())
    );
    assert_eq!(
        ctx().filter("a <").map(|_| ()),
        Err("Invalid FilterExpression: Syntax error; token: \"<EOF>\", near: \"<\"".to_string())
    );
    assert_eq!(
        ctx().projection("a,").map(|_| ()),
        Err("Invalid ProjectionExpression: Syntax error; token: \"<EOF>\", near: \",\"".to_string())
    );
    // Real DynamoDB: SET path = VALUE 1 -> token "1", near "VALUE 1".
    assert_eq!(
        ctx().update_error("SET path = VALUE 1"),
        "Invalid UpdateExpression: Syntax error; token: \"1\", near: \"VALUE 1\""
    );
}

#[test]
fn empty_expressions() {
    for text in ["", "   ", "\n\t"] {
        assert_eq!(ctx().condition_error(text), "Invalid ConditionExpression: The expression can not be empty;");
        assert_eq!(ctx().update_error(text), "Invalid UpdateExpression: The expression can not be empty;");
    }
    assert_eq!(
        ctx().projection("").map(|_| ()),
        Err("Invalid ProjectionExpression: The expression can not be empty;".to_string())
    );
    assert_eq!(
        ctx().key_condition("").map(|_| ()),
        Err("Invalid KeyConditionExpression: The expression can not be empty;".to_string())
    );
}

#[test]
fn keywords_cannot_be_attribute_names() {
    assert_eq!(
        ctx().condition_error("set = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"set\", near: \"set =\""
    );
    assert_eq!(
        ctx().condition_error("a.and = :v"),
        "Invalid ConditionExpression: Syntax error; token: \"and\", near: \".and =\""
    );
}
