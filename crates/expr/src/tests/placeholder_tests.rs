//! ExpressionAttributeNames/Values: resolution, undefined and unused keys.

use super::*;

#[test]
fn values_are_resolved_at_parse_time() {
    let ctx = Ctx::new().name("#n", "name").value(":v", n("5"));
    assert_eq!(
        ctx.condition("#n = :v"),
        Ok(Condition::Compare {
            left: crate::Operand::Path(path("name")),
            op: crate::Comparator::Eq,
            right: crate::Operand::Value(n("5")),
        })
    );
}

#[test]
fn all_used_across_several_expressions() {
    let ctx = Ctx::new().name("#a", "a").name("#b", "b").value(":x", n("1")).value(":y", n("2"));
    let mut ph = ctx.placeholders();
    parse_condition("#a = :x", ExprKind::Condition, &mut ph).expect("condition parses");
    assert_eq!(
        ph.check_all_used().map_err(|e| e.message),
        Err("Value provided in ExpressionAttributeNames unused in expressions: keys: {#b}".to_string())
    );
    parse_update("SET #b = :y", &mut ph).expect("update parses");
    assert_eq!(ph.check_all_used(), Ok(()));
}

#[test]
fn unused_keys_are_listed_sorted_names_first() {
    let ctx = Ctx::new().name("#z", "z").name("#a", "a").value(":b", n("1")).value(":a", n("1")).value(":used", n("1"));
    let mut ph = ctx.placeholders();
    parse_condition("x = :used", ExprKind::Condition, &mut ph).expect("parses");
    assert_eq!(
        ph.check_all_used().map_err(|e| e.message),
        Err("Value provided in ExpressionAttributeNames unused in expressions: keys: {#a, #z}".to_string())
    );
    let only_values = Ctx::new().value(":b", n("1")).value(":a", n("1")).value(":used", n("1"));
    let mut ph = only_values.placeholders();
    parse_condition("x = :used", ExprKind::Condition, &mut ph).expect("parses");
    assert_eq!(
        ph.check_all_used().map_err(|e| e.message),
        Err("Value provided in ExpressionAttributeValues unused in expressions: keys: {:a, :b}".to_string())
    );
}

#[test]
fn absent_maps_are_fine_when_unused() {
    let mut ph = Placeholders::new(None, None);
    parse_projection("a, b", &mut ph).expect("parses");
    assert_eq!(ph.check_all_used(), Ok(()));
    let mut ph = Placeholders::new(None, None);
    assert_eq!(
        parse_projection("#a", &mut ph).map_err(|e| e.message),
        Err("Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: #a".to_string())
    );
}

#[test]
fn undefined_placeholders_per_expression_kind() {
    let ctx = Ctx::new().name("#a", "a").value(":v", n("1"));
    assert_eq!(
        ctx.condition_error("#x = :v"),
        "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #x"
    );
    assert_eq!(
        ctx.condition_error("#a = :x"),
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x"
    );
    assert_eq!(
        ctx.filter("a.#x = :v").map(|_| ()),
        Err("Invalid FilterExpression: An expression attribute name used in the document path is not defined; attribute name: #x".to_string())
    );
    assert_eq!(
        ctx.key_condition("pk = :x").map(|_| ()),
        Err("Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x".to_string())
    );
    assert_eq!(
        ctx.update_error("SET #a = :x"),
        "Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :x"
    );
    // In updates an undefined name is reported before an undefined value.
    assert_eq!(
        ctx.update_error("SET a = :x, #x = :v"),
        "Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #x"
    );
    // In conditions whichever comes first is reported.
    assert_eq!(
        ctx.condition_error("a = :x AND #x = :v"),
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :x"
    );
}
