//! Error bodies: `{"__type": "<namespace>#<Name>", "message": "...", ...}`.

use serde_json::{json, Map, Value};

use crate::error::{ApiError, ErrorKind, ThrottlingReason};
use crate::value::item_to_json;

impl ApiError {
    /// The JSON body: `__type`, the message, then the kind's own members
    /// (Item, CancellationReasons, ThrottlingReasons), in that order.
    pub fn body(&self) -> Vec<u8> {
        let mut m = Map::new();
        m.insert("__type".to_string(), Value::String(self.type_name()));
        if let Some(msg) = &self.message {
            m.insert(self.message_key().to_string(), Value::String(msg.clone()));
        }
        match &self.kind {
            ErrorKind::ConditionalCheckFailed { item: Some(item) } => {
                m.insert("Item".to_string(), item_to_json(item));
            }
            ErrorKind::TransactionCanceled { reasons } => {
                let list: Vec<Value> = reasons
                    .iter()
                    .map(|r| {
                        let mut m = Map::new();
                        m.insert("Code".to_string(), json!(r.code));
                        if let Some(msg) = &r.message {
                            m.insert("Message".to_string(), json!(msg));
                        }
                        if let Some(item) = &r.item {
                            m.insert("Item".to_string(), item_to_json(item));
                        }
                        Value::Object(m)
                    })
                    .collect();
                m.insert("CancellationReasons".to_string(), Value::Array(list));
            }
            ErrorKind::ProvisionedThroughputExceeded(r) => {
                m.insert("ThrottlingReasons".to_string(), throttling_reasons(r));
            }
            // The model spells this member in lower camel case on
            // ThrottlingException only (reference A28).
            ErrorKind::Throttling(r) => {
                m.insert("throttlingReasons".to_string(), throttling_reasons(r));
            }
            _ => {}
        }
        // Rendering a map of strings, arrays and maps cannot fail; should it
        // ever, the client still gets the error's type.
        serde_json::to_vec(&Value::Object(m))
            .unwrap_or_else(|_| format!(r#"{{"__type":"{}"}}"#, self.type_name()).into_bytes())
    }
}

fn throttling_reasons(r: &ThrottlingReason) -> Value {
    json!([{ "reason": r.reason, "resource": r.resource }])
}

#[cfg(test)]
mod tests {
    use dynaburst_engine::{CancellationReason, EngineError};
    use dynaburst_model::{AttributeValue, Item};
    use serde_json::{json, Value};

    use crate::ApiError;

    // Compared as JSON values: the key order of a map depends on serde_json's
    // features, which clients do not care about.
    fn body(e: impl Into<ApiError>) -> Value {
        serde_json::from_slice(&e.into().body()).unwrap()
    }

    fn item() -> Item {
        Item::from([("id".to_string(), AttributeValue::S("a".to_string()))])
    }

    #[test]
    fn bodies_carry_type_message_and_typed_extras() {
        assert_eq!(
            body(ApiError::unknown_operation()),
            json!({"__type": "com.amazon.coral.service#UnknownOperationException"})
        );
        assert_eq!(
            body(ApiError::missing_authentication()),
            json!({"__type": "com.amazon.coral.service#MissingAuthenticationTokenException",
                "message": "Request is missing Authentication Token"})
        );
        assert_eq!(ApiError::internal("x").status(), 500);
        assert_eq!(ApiError::validation("x").status(), 400);
        assert_eq!(
            body(EngineError::ConditionalCheckFailed { item: Some(item()) }),
            json!({"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                "message": "The conditional request failed", "Item": {"id": {"S": "a"}}})
        );
        let reasons = vec![
            CancellationReason { code: "None", message: None, item: None },
            CancellationReason {
                code: "ConditionalCheckFailed",
                message: Some("The conditional request failed".to_string()),
                item: Some(item()),
            },
        ];
        assert_eq!(
            body(EngineError::TransactionCanceled { reasons }),
            json!({"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ConditionalCheckFailed]",
                "CancellationReasons": [{"Code": "None"},
                    {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed", "Item": {"id": {"S": "a"}}}]})
        );
    }

    #[test]
    fn throttling_reasons_are_spelled_per_exception() {
        let resource = "arn:aws:dynamodb:us-east-1:000000000000:table/t";
        let throttled = |provisioned| EngineError::Throttled {
            provisioned,
            reason: "TableWriteKeyRangeThroughputExceeded",
            resource: resource.to_string(),
        };
        let reasons = json!([{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": resource}]);
        assert_eq!(
            body(throttled(false)),
            json!({"__type": "com.amazon.coral.availability#ThrottlingException",
                "message": throttled(false).message(), "throttlingReasons": reasons})
        );
        assert_eq!(
            body(throttled(true)),
            json!({"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": throttled(true).message(), "ThrottlingReasons": reasons})
        );
    }
}
