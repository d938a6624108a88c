//! API errors: a kind (which names DynamoDB's `__type`, its namespace and
//! the HTTP status as a number) and a message. Their JSON body is rendered
//! by `render.rs`, so this module depends on no other module of the crate.

use dynaburst_engine::{CancellationReason, EngineError};
use dynaburst_model::Item;

/// Namespace of DynamoDB's own errors.
pub const NS_DYNAMODB: &str = "com.amazonaws.dynamodb.v20120810";
/// Namespace of ValidationException.
pub const NS_VALIDATE: &str = "com.amazon.coral.validate";
/// Namespace of protocol and authentication errors.
pub const NS_SERVICE: &str = "com.amazon.coral.service";
/// Namespace of ThrottlingException.
pub const NS_AVAILABILITY: &str = "com.amazon.coral.availability";

/// Why the capacity model refused a request: DynamoDB's ThrottlingReason.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottlingReason {
    /// "TableWriteProvisionedThroughputExceeded", …
    pub reason: &'static str,
    /// The throttled resource's ARN.
    pub resource: String,
}

/// Which error, with the data its body carries besides the message.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    Validation,
    /// The body is not the JSON the operation takes.
    Serialization,
    UnknownOperation,
    MissingAuthenticationToken,
    /// The credentials name nothing this server serves.
    UnrecognizedClient,
    /// A resource this account may not touch.
    AccessDenied,
    /// A SigV4 signature that does not verify, or is too old or too new.
    InvalidSignature,
    /// An Authorization header that lacks a part SigV4 needs.
    IncompleteSignature,
    /// HTTP 503: the server is too busy to take the request (SDKs retry).
    ServiceUnavailable,
    /// HTTP 408: the request's body did not arrive in time (SDKs retry).
    RequestTimeout,
    /// An item collection of a table with LSIs would pass 10 GB.
    ItemCollectionSizeLimitExceeded,
    /// A shard iterator older than 15 minutes.
    ExpiredIterator,
    /// Stream records older than those kept.
    TrimmedDataAccess,
    /// HTTP 500.
    InternalServerError,
    ResourceNotFound,
    ResourceInUse,
    BackupNotFound,
    TableNotFound,
    TableAlreadyExists,
    LimitExceeded,
    /// With the old item when ReturnValuesOnConditionCheckFailure asked for it.
    ConditionalCheckFailed {
        item: Option<Item>,
    },
    /// With one reason per action, in request order.
    TransactionCanceled {
        reasons: Vec<CancellationReason>,
    },
    IdempotentParameterMismatch,
    TransactionInProgress,
    /// A PartiQL INSERT of a key that exists.
    DuplicateItem,
    /// A provisioned table over its capacity.
    ProvisionedThroughputExceeded(ThrottlingReason),
    /// An on-demand table over its capacity.
    Throttling(ThrottlingReason),
    /// A control-plane change too soon after another: ThrottlingException
    /// with a message and no ThrottlingReasons.
    ControlThrottling,
    /// No resource-based policy, or not the revision asked for.
    PolicyNotFound,
    /// A point-in-time restore of a table without point-in-time recovery.
    PointInTimeRecoveryUnavailable,
    /// A point-in-time restore to a time outside the restorable window.
    InvalidRestoreTime,
}

impl ErrorKind {
    /// The namespace of the `__type`.
    pub fn namespace(&self) -> &'static str {
        match self {
            ErrorKind::Validation => NS_VALIDATE,
            ErrorKind::Serialization
            | ErrorKind::UnknownOperation
            | ErrorKind::MissingAuthenticationToken
            | ErrorKind::UnrecognizedClient
            | ErrorKind::InvalidSignature
            | ErrorKind::IncompleteSignature
            | ErrorKind::ServiceUnavailable
            | ErrorKind::RequestTimeout
            | ErrorKind::AccessDenied => NS_SERVICE,
            ErrorKind::Throttling(_) | ErrorKind::ControlThrottling => NS_AVAILABILITY,
            _ => NS_DYNAMODB,
        }
    }

    /// The name of the `__type`.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationException",
            ErrorKind::Serialization => "SerializationException",
            ErrorKind::UnknownOperation => "UnknownOperationException",
            ErrorKind::MissingAuthenticationToken => "MissingAuthenticationTokenException",
            ErrorKind::UnrecognizedClient => "UnrecognizedClientException",
            ErrorKind::AccessDenied => "AccessDeniedException",
            ErrorKind::InvalidSignature => "InvalidSignatureException",
            ErrorKind::IncompleteSignature => "IncompleteSignatureException",
            ErrorKind::ServiceUnavailable => "ServiceUnavailableException",
            ErrorKind::RequestTimeout => "RequestTimeoutException",
            ErrorKind::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceededException",
            ErrorKind::ExpiredIterator => "ExpiredIteratorException",
            ErrorKind::TrimmedDataAccess => "TrimmedDataAccessException",
            ErrorKind::InternalServerError => "InternalServerError",
            ErrorKind::ResourceNotFound => "ResourceNotFoundException",
            ErrorKind::ResourceInUse => "ResourceInUseException",
            ErrorKind::BackupNotFound => "BackupNotFoundException",
            ErrorKind::TableNotFound => "TableNotFoundException",
            ErrorKind::TableAlreadyExists => "TableAlreadyExistsException",
            ErrorKind::LimitExceeded => "LimitExceededException",
            ErrorKind::ConditionalCheckFailed { .. } => "ConditionalCheckFailedException",
            ErrorKind::TransactionCanceled { .. } => "TransactionCanceledException",
            ErrorKind::IdempotentParameterMismatch => "IdempotentParameterMismatchException",
            ErrorKind::TransactionInProgress => "TransactionInProgressException",
            ErrorKind::DuplicateItem => "DuplicateItemException",
            ErrorKind::ProvisionedThroughputExceeded(_) => "ProvisionedThroughputExceededException",
            ErrorKind::Throttling(_) | ErrorKind::ControlThrottling => "ThrottlingException",
            ErrorKind::PolicyNotFound => "PolicyNotFoundException",
            ErrorKind::PointInTimeRecoveryUnavailable => "PointInTimeRecoveryUnavailableException",
            ErrorKind::InvalidRestoreTime => "InvalidRestoreTimeException",
        }
    }

    /// The HTTP status, as a number.
    pub fn status(&self) -> u16 {
        match self {
            ErrorKind::InternalServerError => 500,
            ErrorKind::ServiceUnavailable => 503,
            ErrorKind::RequestTimeout => 408,
            _ => 400,
        }
    }
}

/// An error response.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub kind: ErrorKind,
    /// The message; None sends no message member.
    pub message: Option<String>,
}

impl ApiError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ApiError {
        ApiError { kind, message: Some(message.into()) }
    }

    /// ValidationException.
    pub fn validation(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Validation, message)
    }

    /// SerializationException: the body is not the JSON the operation takes.
    pub fn serialization(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::Serialization, message)
    }

    /// SerializationException with no message: the body is not JSON.
    pub fn serialization_without_message() -> ApiError {
        ApiError { kind: ErrorKind::Serialization, message: None }
    }

    /// UnknownOperationException, which has no message.
    pub fn unknown_operation() -> ApiError {
        ApiError { kind: ErrorKind::UnknownOperation, message: None }
    }

    /// UnknownOperationException for a DynamoDB operation this server does
    /// not implement, naming it.
    pub fn not_implemented(operation: &str) -> ApiError {
        ApiError::new(
            ErrorKind::UnknownOperation,
            format!("dynaburst does not implement the DynamoDB operation {operation} yet"),
        )
    }

    /// MissingAuthenticationTokenException.
    pub fn missing_authentication() -> ApiError {
        ApiError::new(ErrorKind::MissingAuthenticationToken, "Request is missing Authentication Token")
    }

    /// UnrecognizedClientException.
    pub fn unrecognized_client(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::UnrecognizedClient, message)
    }

    /// InvalidSignatureException.
    pub fn invalid_signature(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::InvalidSignature, message)
    }

    /// IncompleteSignatureException.
    pub fn incomplete_signature(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::IncompleteSignature, message)
    }

    /// ServiceUnavailableException (HTTP 503), which SDKs retry.
    pub fn service_unavailable(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::ServiceUnavailable, message)
    }

    /// RequestTimeoutException (HTTP 408), which SDKs retry.
    pub fn request_timeout(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::RequestTimeout, message)
    }

    /// InternalServerError (HTTP 500).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorKind::InternalServerError, message)
    }

    /// The HTTP status, as a number.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }

    /// `namespace#Name`, e.g. "com.amazon.coral.validate#ValidationException".
    pub fn type_name(&self) -> String {
        format!("{}#{}", self.kind.namespace(), self.kind.name())
    }

    /// The message member's name: "Message" for TransactionCanceledException,
    /// "message" for every other error.
    pub fn message_key(&self) -> &'static str {
        match self.kind {
            // S83: these spell it with a capital M.
            ErrorKind::TransactionCanceled { .. } | ErrorKind::AccessDenied | ErrorKind::Serialization => "Message",
            _ => "message",
        }
    }
}

impl From<dynaburst_ddbjson::Error> for ApiError {
    fn from(e: dynaburst_ddbjson::Error) -> ApiError {
        match e.class() {
            dynaburst_ddbjson::ErrorClass::Serialization => ApiError::serialization(e.to_string()),
            dynaburst_ddbjson::ErrorClass::Validation => ApiError::validation(e.to_string()),
        }
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let message = e.message();
        let kind = match e {
            EngineError::Validation(_) => ErrorKind::Validation,
            EngineError::ResourceNotFound(_) => ErrorKind::ResourceNotFound,
            EngineError::ResourceInUse(_) => ErrorKind::ResourceInUse,
            EngineError::BackupNotFound(_) => ErrorKind::BackupNotFound,
            EngineError::TableNotFound(_) => ErrorKind::TableNotFound,
            EngineError::TableAlreadyExists(_) => ErrorKind::TableAlreadyExists,
            EngineError::LimitExceeded(_) => ErrorKind::LimitExceeded,
            EngineError::AccessDenied(_) => ErrorKind::AccessDenied,
            EngineError::ItemCollectionSizeLimitExceeded => ErrorKind::ItemCollectionSizeLimitExceeded,
            EngineError::ExpiredIterator => ErrorKind::ExpiredIterator,
            EngineError::TrimmedDataAccess => ErrorKind::TrimmedDataAccess,
            EngineError::ConditionalCheckFailed { item } => ErrorKind::ConditionalCheckFailed { item },
            EngineError::TransactionCanceled { reasons } => ErrorKind::TransactionCanceled { reasons },
            EngineError::IdempotentParameterMismatch => ErrorKind::IdempotentParameterMismatch,
            EngineError::TransactionInProgress => ErrorKind::TransactionInProgress,
            EngineError::Throttled { provisioned: true, reason, resource } => {
                ErrorKind::ProvisionedThroughputExceeded(ThrottlingReason { reason, resource })
            }
            EngineError::Throttled { provisioned: false, reason, resource } => {
                ErrorKind::Throttling(ThrottlingReason { reason, resource })
            }
            EngineError::Internal(_) => ErrorKind::InternalServerError,
            EngineError::PolicyNotFound(_) => ErrorKind::PolicyNotFound,
            EngineError::PointInTimeRecoveryUnavailable(_) => ErrorKind::PointInTimeRecoveryUnavailable,
            EngineError::InvalidRestoreTime(_) => ErrorKind::InvalidRestoreTime,
            EngineError::ControlThrottled(_) => ErrorKind::ControlThrottling,
        };
        ApiError::new(kind, message)
    }
}
