//! Error bodies: `{"__type": "<namespace>#<Name>", "message": "..."}`.

use dynaburst_engine::EngineError;
use serde_json::{json, Map, Value};

use crate::value::item_to_json;

/// Namespace of DynamoDB's own errors.
pub const NS_DYNAMODB: &str = "com.amazonaws.dynamodb.v20120810";
/// Namespace of ValidationException.
pub const NS_VALIDATE: &str = "com.amazon.coral.validate";
/// Namespace of protocol and authentication errors.
pub const NS_SERVICE: &str = "com.amazon.coral.service";
/// Namespace of ThrottlingException.
pub const NS_AVAILABILITY: &str = "com.amazon.coral.availability";

/// An error response: HTTP status and JSON body.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    /// Namespace and name, e.g. "com.amazon.coral.validate#ValidationException".
    pub type_name: String,
    /// The message; None sends no message member.
    pub message: Option<String>,
    /// Extra members (Item, CancellationReasons, ThrottlingReasons…).
    pub extra: Map<String, Value>,
    /// The message member's name ("message", or "Message" for
    /// TransactionCanceledException).
    pub message_key: &'static str,
}

impl ApiError {
    /// A 400 error of `namespace#name`.
    pub fn new(namespace: &str, name: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            type_name: format!("{namespace}#{name}"),
            message: Some(message.into()),
            extra: Map::new(),
            message_key: "message",
        }
    }

    /// ValidationException.
    pub fn validation(message: impl Into<String>) -> ApiError {
        ApiError::new(NS_VALIDATE, "ValidationException", message)
    }

    /// SerializationException: the body is not the JSON the operation takes.
    pub fn serialization(message: impl Into<String>) -> ApiError {
        ApiError::new(NS_SERVICE, "SerializationException", message)
    }

    /// UnknownOperationException.
    pub fn unknown_operation() -> ApiError {
        let mut e = ApiError::new(NS_SERVICE, "UnknownOperationException", "");
        e.message = None;
        e
    }

    /// MissingAuthenticationTokenException.
    pub fn missing_authentication() -> ApiError {
        ApiError::new(NS_SERVICE, "MissingAuthenticationTokenException", "Request is missing Authentication Token")
    }

    /// InternalServerError (HTTP 500).
    pub fn internal(message: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(NS_DYNAMODB, "InternalServerError", message);
        e.status = 500;
        e
    }

    /// The JSON body.
    pub fn body(&self) -> Vec<u8> {
        let mut m = Map::new();
        m.insert("__type".to_string(), Value::String(self.type_name.clone()));
        if let Some(msg) = &self.message {
            m.insert(self.message_key.to_string(), Value::String(msg.clone()));
        }
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&Value::Object(m)).unwrap_or_default()
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let message = e.message();
        match e {
            EngineError::Validation(_) => ApiError::validation(message),
            EngineError::ResourceNotFound(_) => ApiError::new(NS_DYNAMODB, "ResourceNotFoundException", message),
            EngineError::ResourceInUse(_) => ApiError::new(NS_DYNAMODB, "ResourceInUseException", message),
            EngineError::LimitExceeded(_) => ApiError::new(NS_DYNAMODB, "LimitExceededException", message),
            EngineError::ConditionalCheckFailed { item } => {
                let mut err = ApiError::new(NS_DYNAMODB, "ConditionalCheckFailedException", message);
                if let Some(item) = item {
                    err.extra.insert("Item".to_string(), item_to_json(&item));
                }
                err
            }
            EngineError::TransactionCanceled { reasons } => {
                let mut err = ApiError::new(NS_DYNAMODB, "TransactionCanceledException", message);
                err.message_key = "Message";
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
                err.extra.insert("CancellationReasons".to_string(), Value::Array(list));
                err
            }
            EngineError::IdempotentParameterMismatch => {
                ApiError::new(NS_DYNAMODB, "IdempotentParameterMismatchException", message)
            }
            EngineError::TransactionInProgress => ApiError::new(NS_DYNAMODB, "TransactionInProgressException", message),
            EngineError::Throttled { provisioned, reason, resource } => {
                let reasons = json!([{ "reason": reason, "resource": resource }]);
                if provisioned {
                    let mut err = ApiError::new(NS_DYNAMODB, "ProvisionedThroughputExceededException", message);
                    err.extra.insert("ThrottlingReasons".to_string(), reasons);
                    err
                } else {
                    // The model spells this member in lower camel case on
                    // ThrottlingException only (reference A28).
                    let mut err = ApiError::new(NS_AVAILABILITY, "ThrottlingException", message);
                    err.extra.insert("throttlingReasons".to_string(), reasons);
                    err
                }
            }
            EngineError::Internal(_) => ApiError::internal(message),
        }
    }
}
