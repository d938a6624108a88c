//! Resource-based policies in modelled time: revisions, ExpectedRevisionId,
//! the cooldown after a change, the stream slots, and the catalog
//! (ack-api-quirks DDB-TABLE-205 to -214, -233, -246).

use std::sync::Arc;

use dynaburst_engine::store::MemStorage;
use dynaburst_engine::*;
use dynaburst_model::{Millis, ScalarType};

const ARN: &str = "arn:aws:dynamodb:us-east-1:000000000000:table/p";

fn doc(text: &str) -> PolicyDocument {
    PolicyDocument { text: text.into(), version_implicit: false }
}

fn create(engine: &Engine, policy: Option<PolicyDocument>, now: Millis) {
    let input = CreateTableInput {
        resource_policy: policy,
        stream: Some((true, Some(stream::StreamViewType::KeysOnly))),
        ..CreateTableInput::new(
            "p",
            vec![("pk".into(), KeyRole::Hash)],
            vec![("pk".into(), ScalarType::S)],
            BillingMode::PayPerRequest,
        )
    };
    engine.create_table(input, now).unwrap();
}

fn message(r: Result<impl std::fmt::Debug, EngineError>) -> (String, String) {
    let e = r.unwrap_err();
    let kind = format!("{e:?}").split('(').next().unwrap_or_default().to_string();
    (kind, e.message())
}

#[test]
fn revisions_expected_revisions_and_the_cooldown_in_modelled_time() {
    let engine = Engine::new(EngineConfig::local());
    let t0 = Millis(1_791_506_149_206);
    create(&engine, Some(doc("A")), t0);
    let table = engine.policy_target(ARN).unwrap();
    // A policy given with the table has its creation as revision.
    assert_eq!(engine.get_resource_policy(ARN, &table, t0).unwrap(), ("A".into(), t0.0.to_string()));
    let t1 = Millis(t0.0 + 2_000);
    // The same document again: no change, the same revision, even now.
    assert_eq!(engine.put_resource_policy(&table, doc("A"), None, t1).unwrap(), t0.0.to_string());
    // Another within 15 s of the change: throttled until then.
    assert_eq!(
        message(engine.put_resource_policy(&table, doc("B"), None, t1)),
        (
            "ControlThrottled".into(),
            "Resource-based policy for table p modified within the previous 15000 milliseconds. Please try again after 2026-10-09T00:36:04.206Z.".into()
        )
    );
    // A wrong expectation is answered before the cooldown.
    let p = "Resource-based policy not found for the provided ResourceArn: ";
    assert_eq!(
        message(engine.put_resource_policy(&table, doc("B"), Some("1"), t1)),
        ("PolicyNotFound".into(), format!("{p}Requested update for policy with revision id 1, but the policy associated to target table p has revision id {}.", t0.0))
    );
    assert_eq!(
        message(engine.put_resource_policy(&table, doc("B"), Some(NO_POLICY), t1)).1,
        format!("{p}Requested policy update expecting none to be present for table p, but a policy exists with revision id {}.", t0.0)
    );
    let t2 = Millis(t0.0 + POLICY_COOLDOWN_MS);
    let r2 = engine.put_resource_policy(&table, doc("B"), Some(&t0.0.to_string()), t2).unwrap();
    assert_eq!(r2, t2.0.to_string());
    assert_eq!(engine.get_resource_policy(ARN, &table, t2).unwrap(), ("B".into(), r2.clone()));

    // Deleting answers the removed revision, then (for the cooldown) the
    // deletion's own, which expectations are checked against.
    let t3 = Millis(t2.0 + POLICY_COOLDOWN_MS);
    assert_eq!(engine.delete_resource_policy(&table, None, t3).unwrap(), Some(r2.clone()));
    let t4 = Millis(t3.0 + 2_000);
    assert_eq!(engine.delete_resource_policy(&table, None, t4).unwrap(), Some(t3.0.to_string()));
    assert_eq!(message(engine.get_resource_policy(ARN, &table, t4)), ("PolicyNotFound".into(), format!("{p}{ARN}")));
    assert_eq!(
        message(engine.put_resource_policy(&table, doc("C"), Some(&r2), t4)).1,
        format!("{p}Requested update for policy with revision id {r2}, but the policy associated to target table p has revision id {}.", t3.0)
    );
    assert_eq!(message(engine.put_resource_policy(&table, doc("C"), None, t4)).0, "ControlThrottled");
    // Once it has passed: no policy at all.
    let t5 = Millis(t3.0 + POLICY_COOLDOWN_MS);
    assert_eq!(engine.delete_resource_policy(&table, None, t5).unwrap(), None);
    assert_eq!(
        message(engine.delete_resource_policy(&table, Some("123456789"), t5)).1,
        format!("{p}Requested update for policy with revision id 123456789, but table p has no associated policy.")
    );
    assert_eq!(engine.put_resource_policy(&table, doc("C"), Some(NO_POLICY), t5).unwrap(), t5.0.to_string());
}

#[test]
fn a_stream_has_a_slot_of_its_own_and_arns_are_checked() {
    let engine = Engine::new(EngineConfig::local());
    let t0 = Millis(1_000_000);
    create(&engine, None, t0);
    let label = engine.describe_table("p", t0).unwrap().settings.stream.unwrap().label;
    let stream_arn = format!("{ARN}/stream/{label}");
    let stream = engine.policy_target(&stream_arn).unwrap();
    let table = engine.policy_target(ARN).unwrap();
    let r = engine.put_resource_policy(&stream, doc("S"), None, t0).unwrap();
    // The table's slot is untouched, and takes a change at once.
    assert_eq!(message(engine.get_resource_policy(ARN, &table, t0)).0, "PolicyNotFound");
    engine.put_resource_policy(&table, doc("T"), None, Millis(t0.0 + 1)).unwrap();
    assert_eq!(engine.get_resource_policy(&stream_arn, &stream, t0).unwrap(), ("S".into(), r));
    assert_eq!(
        message(engine.put_resource_policy(&stream, doc("S2"), None, Millis(t0.0 + 1))).1,
        format!("Resource-based policy for stream {label} modified within the previous 15000 milliseconds. Please try again after 1970-01-01T00:16:55.000Z.")
    );
    let bogus = engine.policy_target(&format!("{ARN}/stream/2000-01-01T00:00:00.000")).unwrap();
    assert_eq!(
        message(engine.get_resource_policy("x", &bogus, t0)),
        (
            "ResourceNotFound".into(),
            "Requested resource not found: Stream: 2000-01-01T00:00:00.000 not found for Table: p".into()
        )
    );
    let refused = |arn: &str| message(engine.policy_target(arn));
    let iv = "One or more parameter values were invalid: ";
    assert_eq!(refused("p"), ("Validation".into(), format!("{iv}ARNs must start with 'arn:': p")));
    assert_eq!(
        refused("arn:aws:dynamodb:us-east-1:111122223333:table/p").1,
        "This action is only supported by accounts that match the resource owner\u{2019}s account."
    );
    for elsewhere in
        ["arn:aws:dynamodb:us-west-2:000000000000:table/p", "arn:aws-cn:dynamodb:us-east-1:000000000000:table/p"]
    {
        assert_eq!(refused(elsewhere).1, format!("{iv}Invalid resource Arn: {elsewhere}"));
    }
    let index = format!("{ARN}/index/g");
    assert_eq!(
        refused(&index).1,
        format!("{iv}Invalid resource arn provided, only table or stream is accepted. Provided resource arn: {index}")
    );
    let backup = format!("{ARN}/backup/01700000000000-abcdefgh");
    assert_eq!(refused(&backup).1, format!("{iv}Provided Arn is not a DynamoDB resource arn: {backup}"));
    let missing = engine.policy_target("arn:aws:dynamodb:us-east-1:000000000000:table/q").unwrap();
    assert_eq!(
        message(engine.delete_resource_policy(&missing, None, t0)),
        ("ResourceNotFound".into(), "Requested resource not found: Table: q not found".into())
    );
    // The table's deletion takes its policies; its old stream has none.
    engine.delete_table("p", t0).unwrap();
    assert_eq!(message(engine.get_resource_policy(ARN, &table, t0)).0, "ResourceNotFound");
    assert_eq!(
        message(engine.get_resource_policy(&stream_arn, &stream, t0)),
        (
            "PolicyNotFound".into(),
            format!("Resource-based policy not found for the provided ResourceArn: {stream_arn}")
        )
    );
    create(&engine, None, Millis(t0.0 + 5));
    assert_eq!(message(engine.get_resource_policy(ARN, &table, t0)).0, "PolicyNotFound", "a new table starts without");
}

#[test]
fn policies_are_kept_in_the_catalog() {
    let storage = Arc::new(MemStorage::new());
    let engine = Engine::open(EngineConfig::local(), storage.clone(), Millis(0)).unwrap();
    create(&engine, Some(PolicyDocument { text: "A".into(), version_implicit: true }), Millis(7));
    let table = engine.policy_target(ARN).unwrap();
    engine.delete_resource_policy(&table, None, Millis(POLICY_COOLDOWN_MS + 7)).unwrap();
    engine.put_resource_policy(&table, doc("B"), None, Millis(2 * POLICY_COOLDOWN_MS + 7)).unwrap();
    let reopened = Engine::open(EngineConfig::local(), storage, Millis(0)).unwrap();
    let expected = (String::from("B"), (2 * POLICY_COOLDOWN_MS + 7).to_string());
    assert_eq!(reopened.get_resource_policy(ARN, &table, Millis(0)).unwrap(), expected);
    // The cooldown came back with it.
    assert_eq!(
        message(reopened.put_resource_policy(&table, doc("C"), None, Millis(2 * POLICY_COOLDOWN_MS + 8))).0,
        "ControlThrottled"
    );
}
