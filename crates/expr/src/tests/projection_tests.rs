//! Projection expressions: parsing and projecting nested paths.

use super::*;
use crate::project;

fn sample() -> Item {
    item(&[
        ("a", s("top")),
        ("b", m(&[("c", n("1")), ("d", n("2")), ("e", m(&[("f", s("deep")), ("g", s("no"))]))])),
        ("l", l(vec![s("l0"), m(&[("x", s("x1")), ("y", s("y1"))]), s("l2"), s("l3")])),
        ("unused", s("dropped")),
    ])
}

#[test]
fn projects_top_level_and_nested_paths() {
    let ctx = Ctx::new().name("#e", "e");
    let paths = ctx.projection("a, b.c, b.#e.f").expect("parses");
    assert_eq!(paths, vec![path("a"), path("b.c"), path("b.e.f")]);
    assert_eq!(
        project(&sample(), &paths),
        item(&[("a", s("top")), ("b", m(&[("c", n("1")), ("e", m(&[("f", s("deep"))]))]))])
    );
}

#[test]
fn list_elements_are_compacted_in_index_order() {
    let paths = Ctx::new().projection("l[3], l[1].y, l[0]").expect("parses");
    assert_eq!(project(&sample(), &paths), item(&[("l", l(vec![s("l0"), m(&[("y", s("y1"))]), s("l3")]))]));
}

#[test]
fn missing_paths_are_skipped() {
    let paths = Ctx::new().projection("a, nothing, b.zz, l[9], l[0].y, b.c[0]").expect("parses");
    // Only `a` exists as addressed; containers with nothing selected vanish.
    assert_eq!(project(&sample(), &paths), item(&[("a", s("top"))]));
    assert_eq!(project(&Item::new(), &paths), Item::new());
}

#[test]
fn whole_attribute_wins_over_nested_parts_when_built_directly() {
    // The parser rejects overlapping paths; project() tolerates them.
    let paths = vec![path("b.c"), path("b")];
    assert_eq!(project(&sample(), &paths), item(&[("b", sample()["b"].clone())]));
}

#[test]
fn projection_errors() {
    let ctx = Ctx::new().name("#a", "a");
    assert_eq!(
        ctx.projection("a, #a.b"),
        Err("Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]".to_string())
    );
    assert_eq!(
        ctx.projection("#a.b, a[0]"),
        Err("Invalid ProjectionExpression: Two document paths conflict with each other; must remove or rewrite one of these paths; path one: [a, b], path two: [a, [0]]".to_string())
    );
    assert_eq!(
        ctx.projection("#a, name"),
        Err("Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: name".to_string())
    );
    assert_eq!(
        ctx.projection("#a (b)"),
        Err("Invalid ProjectionExpression: Syntax error; token: \"(\", near: \"#a (b\"".to_string())
    );
    assert_eq!(
        ctx.projection("size(#a)"),
        Err("Invalid ProjectionExpression: Syntax error; token: \"(\", near: \"size(#a\"".to_string())
    );
}
