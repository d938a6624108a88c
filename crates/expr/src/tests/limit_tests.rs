//! Limits: expression size, nesting (on a deliberately small stack), IN
//! operands, update operators and document path depth.

use std::thread;

use super::*;
use crate::{
    MAX_CONDITION_OPERATORS, MAX_EXPRESSION_BYTES, MAX_IN_OPERANDS, MAX_NESTING_DEPTH, MAX_PATH_DEPTH,
    MAX_UPDATE_OPERATORS,
};

/// Stack for the deep-input tests: small enough that unbounded recursion
/// over thousands of levels would overflow it, large enough for the 300
/// levels the parser allows in a debug build (a release build needs a
/// quarter of it).
const SMALL_STACK: usize = 1024 * 1024;

/// Runs `f` on a thread with [`SMALL_STACK`] bytes of stack.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn test thread")
        .join()
        .expect("test thread must not overflow its stack or panic")
}

const NESTING_MESSAGE: &str =
    "Invalid ConditionExpression: The expression has too many nested levels; maximum nesting level: 300";
const OPERATORS_MESSAGE: &str =
    "Invalid ConditionExpression: The expression contains too many operators; operator count: 301";

#[test]
fn limits_have_dynamodb_values() {
    assert_eq!(MAX_EXPRESSION_BYTES, 4096);
    assert_eq!(MAX_NESTING_DEPTH, 300);
    assert_eq!(MAX_CONDITION_OPERATORS, 300);
    assert_eq!(MAX_PATH_DEPTH, 32);
    assert_eq!(MAX_IN_OPERANDS, 100);
    assert_eq!(MAX_UPDATE_OPERATORS, 300);
}

#[test]
fn expression_size_limit() {
    let ctx = Ctx::new().value(":v", n("1"));
    // 5,000 bytes: `a = :v OR a = :v OR …` padded with spaces.
    let mut text = "a = :v".to_string();
    while text.len() + " OR a = :v".len() <= 5000 {
        text.push_str(" OR a = :v");
    }
    text.push_str(&" ".repeat(5000 - text.len()));
    assert_eq!(text.len(), 5000);
    assert_eq!(
        ctx.condition_error(&text),
        "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 5000"
    );
    assert_eq!(
        ctx.update_error(&format!("SET {}", "a".repeat(4093))),
        "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size; expression size: 4097"
    );
    // Exactly 4096 bytes is accepted.
    let name = "a".repeat(4096 - " = :v".len());
    let text = format!("{name} = :v");
    assert_eq!(text.len(), 4096);
    assert!(ctx.condition(&text).is_ok());
}

#[test]
fn ten_thousand_nested_parentheses_fail_cleanly() {
    let outcome = on_small_stack(|| {
        let ctx = Ctx::new().value(":v", n("1"));
        let text = format!("{}a = :v{}", "(".repeat(10_000), ")".repeat(10_000));
        ctx.condition(&text).map(|_| ())
    });
    // Too long to parse at all.
    assert_eq!(
        outcome,
        Err("Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 20006".to_string())
    );
}

#[test]
fn deep_nesting_within_the_size_limit_fails_cleanly() {
    let outcomes = on_small_stack(|| {
        let ctx = Ctx::new().value(":v", n("1"));
        let parens = format!("{}a = :v{}", "(".repeat(2_000), ")".repeat(2_000));
        let operand_parens = format!("a = {}:v{}", "(".repeat(2_000), ")".repeat(2_000));
        let sizes = format!("{}a{} = :v", "size(".repeat(600), ")".repeat(600));
        let unclosed = "(".repeat(4_000);
        let nots = format!("{}a = :v", "NOT ".repeat(1_000));
        [parens, operand_parens, sizes, unclosed, nots]
            .iter()
            .map(|text| ctx.condition(text).map(|_| ()))
            .collect::<Vec<_>>()
    });
    let [parens @ .., nots] = outcomes.as_slice() else { panic!("five outcomes") };
    for outcome in parens {
        assert_eq!(outcome, &Err(NESTING_MESSAGE.to_string()));
    }
    // A thousand NOTs are a thousand operators: refused at the 301st.
    assert_eq!(nots, &Err(OPERATORS_MESSAGE.to_string()));
}

#[test]
fn deep_update_nesting_fails_cleanly() {
    let outcomes = on_small_stack(|| {
        let ctx = Ctx::new().value(":v", n("1"));
        let functions = format!("SET a = {}:v{}", "if_not_exists(a, ".repeat(200), ")".repeat(200));
        let parens = format!("SET a = {}b{}", "(".repeat(2_000), ")".repeat(2_000));
        [functions, parens].iter().map(|text| ctx.update(text).map(|_| ())).collect::<Vec<_>>()
    });
    // 200 nested calls are within both limits; 2,000 parentheses are not.
    assert_eq!(outcomes[0], Ok(()));
    let message = "Invalid UpdateExpression: The expression has too many nested levels; maximum nesting level: 300";
    assert_eq!(outcomes[1], Err(message.to_string()));
}

#[test]
fn nesting_and_operator_limit_boundaries() {
    let ctx = Ctx::new().value(":v", n("1"));
    let item = item(&[("a", n("2"))]);
    // 300 operators pass (`a = :v` and 149 `OR a = :v`: 150 comparisons,
    // 149 ORs, 299; one more comparison makes 300); the 301st is refused.
    let ors = |count: usize| format!("a = :v{}", " OR a = :v".repeat(count));
    assert!(ctx.condition(&ors(149)).is_ok());
    assert_eq!(ctx.condition_error(&ors(150)), OPERATORS_MESSAGE);
    // DynamoDB's own case: `a<b or (a<b or (…))` 149 deep has 299
    // operators and passes; parentheses are not operators.
    let nested = format!("a < :v{}{}", " OR (a < :v".repeat(149), ")".repeat(149));
    assert!(ctx.condition(&nested).is_ok());
    // Alternating parentheses and NOT: 150 of each is 300 levels and 151
    // operators.
    let alternating = format!("{}a = :v{}", "(NOT ".repeat(150), ")".repeat(150));
    assert!(!ctx.holds(&alternating, &item));
    assert!(ctx.holds(&format!("{}a = :v{}", "(NOT ".repeat(149), ")".repeat(149)), &item));
    assert_eq!(ctx.condition_error(&format!("NOT {alternating}")), NESTING_MESSAGE);
    // Evaluation of the deepest accepted tree is fine on a small stack.
    let evaluated = on_small_stack(move || {
        let ctx = Ctx::new().value(":v", n("1"));
        ctx.holds(&alternating, &item)
    });
    assert!(!evaluated);
}

#[test]
fn in_operand_limit() {
    let ctx = Ctx::new().value(":v", n("1"));
    let list = |count: usize| vec![":v"; count].join(", ");
    assert!(ctx.condition(&format!("a IN ({})", list(100))).is_ok());
    assert_eq!(
        ctx.condition_error(&format!("a IN ({})", list(101))),
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 101"
    );
    assert_eq!(
        ctx.condition_error(&format!("a IN ({})", list(150))),
        "Invalid ConditionExpression: The IN operator is provided with too many operands; number of operands: 150"
    );
}

#[test]
fn update_operator_limit() {
    let ctx = Ctx::new().value(":v", n("1"));
    let actions = |count: usize| {
        let list: Vec<String> = (0..count).map(|i| format!("a{i}=:v+:v")).collect();
        format!("SET {}", list.join(","))
    };
    let at_limit = actions(300);
    assert!(at_limit.len() <= MAX_EXPRESSION_BYTES);
    assert!(ctx.update(&at_limit).is_ok());
    assert_eq!(
        ctx.update_error(&actions(301)),
        "Invalid UpdateExpression: The expression has too many operators or functions; number of operators or functions: 301, maximum allowed: 300"
    );
    // Function calls count too: 10 actions with a function and a `+`
    // each, plus 282 with a `+`.
    let mixed: Vec<String> = (0..10)
        .map(|i| format!("f{i}=if_not_exists(f{i},:v)+:v"))
        .chain((0..282).map(|i| format!("a{i}=:v+:v")))
        .collect();
    let mixed = format!("SET {}", mixed.join(","));
    assert!(mixed.len() <= MAX_EXPRESSION_BYTES);
    assert_eq!(
        ctx.update_error(&mixed),
        "Invalid UpdateExpression: The expression has too many operators or functions; number of operators or functions: 302, maximum allowed: 300"
    );
}

#[test]
fn document_path_depth_limit() {
    let ctx = Ctx::new().value(":v", n("1"));
    // 32 levels, the first name included (`a` and 31 `.b`).
    let deepest = format!("a{}", ".b".repeat(MAX_PATH_DEPTH - 1));
    assert!(ctx.condition(&format!("{deepest} = :v")).is_ok());
    assert!(ctx.update(&format!("SET {deepest} = :v")).is_ok());
    assert_eq!(
        ctx.condition_error(&format!("{deepest}[0] = :v")),
        "Invalid ConditionExpression: The document path has too many nesting levels; maximum nesting level: 32"
    );
    assert_eq!(
        ctx.projection(&format!("{deepest}.c")),
        Err("Invalid ProjectionExpression: The document path has too many nesting levels; maximum nesting level: 32"
            .to_string())
    );
}
