//! Key condition expressions: accepted shapes and rejected ones.

use super::*;
use crate::{KeyOp, KeyPart};

fn ctx() -> Ctx {
    Ctx::new()
        .name("#pk", "pk")
        .name("#sk", "sk")
        .value(":v", s("hash"))
        .value(":a", n("1"))
        .value(":b", n("9"))
        .value(":p", s("pre"))
}

fn part(attribute: &str, op: KeyOp) -> KeyPart {
    KeyPart { attribute: attribute.to_string(), op }
}

#[test]
fn partition_key_only() {
    assert_eq!(ctx().key_condition("pk = :v"), Ok(KeyCondition { parts: vec![part("pk", KeyOp::Eq(s("hash")))] }));
    assert_eq!(ctx().key_condition("#pk = :v"), Ok(KeyCondition { parts: vec![part("pk", KeyOp::Eq(s("hash")))] }));
}

#[test]
fn every_sort_key_operator() {
    let cases = [
        ("sk = :a", KeyOp::Eq(n("1"))),
        ("sk < :a", KeyOp::Lt(n("1"))),
        ("sk <= :a", KeyOp::Le(n("1"))),
        ("sk > :a", KeyOp::Gt(n("1"))),
        ("sk >= :a", KeyOp::Ge(n("1"))),
        ("sk BETWEEN :a AND :b", KeyOp::Between(n("1"), n("9"))),
        ("begins_with(sk, :p)", KeyOp::BeginsWith(s("pre"))),
        // The value may come first; the operator is mirrored.
        (":a < sk", KeyOp::Gt(n("1"))),
        (":a >= #sk", KeyOp::Le(n("1"))),
    ];
    for (sort_condition, op) in cases {
        let text = format!("pk = :v AND {sort_condition}");
        assert_eq!(
            ctx().key_condition(&text),
            Ok(KeyCondition { parts: vec![part("pk", KeyOp::Eq(s("hash"))), part("sk", op)] }),
            "{text}"
        );
    }
}

#[test]
fn either_order_and_parentheses() {
    let expected =
        KeyCondition { parts: vec![part("sk", KeyOp::BeginsWith(s("pre"))), part("pk", KeyOp::Eq(s("hash")))] };
    assert_eq!(ctx().key_condition("begins_with(#sk, :p) and #pk = :v"), Ok(expected.clone()));
    assert_eq!(ctx().key_condition("(begins_with(sk, :p)) AND (pk = :v)"), Ok(expected.clone()));
    assert_eq!(ctx().key_condition("(begins_with(sk, :p) AND pk = :v)"), Ok(expected));
}

#[test]
fn rejected_shapes() {
    let cases = [
        ("pk = :v OR sk = :a", "Invalid operator used in KeyConditionExpression: OR"),
        ("NOT pk = :v", "Invalid operator used in KeyConditionExpression: NOT"),
        ("pk IN (:v)", "Invalid operator used in KeyConditionExpression: IN"),
        ("pk <> :v", "Invalid operator used in KeyConditionExpression: <>"),
        ("pk = :v AND contains(sk, :p)", "Invalid operator used in KeyConditionExpression: contains"),
        ("attribute_exists(pk)", "Invalid operator used in KeyConditionExpression: attribute_exists"),
        ("attribute_not_exists(pk)", "Invalid operator used in KeyConditionExpression: attribute_not_exists"),
        ("size(pk) = :a", "KeyConditionExpressions cannot contain nested operations"),
        ("pk = sk", "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"),
        (":v = :a", "Invalid condition in KeyConditionExpression: No key attribute specified"),
        ("pk.x = :v", "KeyConditionExpressions cannot have conditions on nested attributes"),
        ("pk[0] = :v", "KeyConditionExpressions cannot have conditions on nested attributes"),
        ("pk = :v AND pk = :v", "KeyConditionExpressions must only contain one condition per key"),
        (
            "a = :v AND b = :v AND c = :v AND d = :v AND e = :v AND f = :v AND g = :v AND h = :v AND i = :v",
            "Query key condition not supported",
        ),
        (
            "pk = :v AND begins_with(:p, sk)",
            "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand",
        ),
        (
            "pk = :v AND :a BETWEEN sk AND :b",
            "Invalid condition in KeyConditionExpression: BETWEEN operator must have the key attribute as its first operand",
        ),
        (
            "pk = :v AND sk BETWEEN :a AND pk",
            "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(ctx().key_condition(text), Err(message.to_string()), "{text}");
    }
}

#[test]
fn condition_level_errors_keep_the_key_condition_prefix() {
    assert_eq!(
        ctx().key_condition("pk = :v AND foo(sk)"),
        Err("Invalid KeyConditionExpression: Invalid function name; function: foo".to_string())
    );
    assert_eq!(
        ctx().key_condition("pk = :v AND size(sk)"),
        Err("Invalid KeyConditionExpression: The function is not allowed to be used this way in an expression; function: size".to_string())
    );
    assert_eq!(
        ctx().key_condition("name = :v"),
        Err("Invalid KeyConditionExpression: Attribute name is a reserved keyword; reserved keyword: name".to_string())
    );
}
