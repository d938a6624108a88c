//! The engine's errors: each maps to one DynamoDB error type, and carries
//! DynamoDB's exact message.

use std::fmt;

use dynaburst_model::Item;

use crate::store::StoreError;
use crate::types::CancellationReason;

/// ProvisionedThroughputExceededException's message (reference A25).
pub const PROVISIONED_EXCEEDED_MESSAGE: &str = "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.";
/// ThrottlingException's message for a table (reference A26).
pub const THROTTLING_MESSAGE: &str = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html";

/// An operation's failure, as DynamoDB would report it.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// ValidationException.
    Validation(String),
    /// ResourceNotFoundException.
    ResourceNotFound(String),
    /// ResourceInUseException.
    ResourceInUse(String),
    /// LimitExceededException.
    LimitExceeded(String),
    /// AccessDeniedException (a resource ARN this account cannot touch).
    AccessDenied(String),
    /// ExpiredIteratorException: a shard iterator older than 15 minutes.
    ExpiredIterator,
    /// TrimmedDataAccessException: records older than the stream keeps.
    TrimmedDataAccess,
    /// ItemCollectionSizeLimitExceededException: a write would grow an item
    /// collection of a table with LSIs past its limit.
    ItemCollectionSizeLimitExceeded,
    /// ConditionalCheckFailedException, with the old item when asked for.
    ConditionalCheckFailed { item: Option<Item> },
    /// TransactionCanceledException, reasons in request order.
    TransactionCanceled { reasons: Vec<CancellationReason> },
    /// IdempotentParameterMismatchException.
    IdempotentParameterMismatch,
    /// TransactionInProgressException.
    TransactionInProgress,
    /// Refused by the capacity model: ProvisionedThroughputExceededException
    /// for provisioned tables, ThrottlingException for on-demand ones, with
    /// the ThrottlingReason and the throttled resource's ARN.
    Throttled { provisioned: bool, reason: &'static str, resource: String },
    /// BackupNotFoundException.
    BackupNotFound(String),
    /// TableNotFoundException (the backup operations' not-found).
    TableNotFound(String),
    /// TableAlreadyExistsException (a restore's target exists).
    TableAlreadyExists(String),
    /// PolicyNotFoundException: no resource-based policy, or not the
    /// revision asked for.
    PolicyNotFound(String),
    /// PointInTimeRecoveryUnavailableException: a point-in-time restore of
    /// a table without point-in-time recovery.
    PointInTimeRecoveryUnavailable(String),
    /// InvalidRestoreTimeException: a time outside the restorable window.
    InvalidRestoreTime(String),
    /// ThrottlingException of the control plane (a change too soon after
    /// another): a message, no ThrottlingReasons.
    ControlThrottled(String),
    /// InternalServerError: the storage failed. The request changed
    /// nothing (a commit is all or nothing).
    Internal(StoreError),
}

/// ThrottlingException's message when an on-demand GSI refused the write (A26).
pub const INDEX_THROTTLING_MESSAGE: &str = "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically scaling your index so please try again shortly.";

/// ItemCollectionSizeLimitExceededException's message (S61: wording not
/// confirmed; this is moto's).
pub const ITEM_COLLECTION_MESSAGE: &str = "Item collection size limit exceeded";

impl EngineError {
    /// The message DynamoDB sends with this error.
    pub fn message(&self) -> String {
        match self {
            EngineError::Validation(m)
            | EngineError::ResourceNotFound(m)
            | EngineError::ResourceInUse(m)
            | EngineError::LimitExceeded(m)
            | EngineError::AccessDenied(m)
            | EngineError::BackupNotFound(m)
            | EngineError::TableNotFound(m)
            | EngineError::TableAlreadyExists(m)
            | EngineError::PolicyNotFound(m)
            | EngineError::PointInTimeRecoveryUnavailable(m)
            | EngineError::InvalidRestoreTime(m)
            | EngineError::ControlThrottled(m) => m.clone(),
            EngineError::Internal(e) => format!("Internal server error: {e}"),
            EngineError::ConditionalCheckFailed { .. } => "The conditional request failed".to_string(),
            EngineError::TransactionCanceled { reasons } => {
                let codes: Vec<&str> = reasons.iter().map(|r| r.code).collect();
                format!(
                    "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                    codes.join(", ")
                )
            }
            EngineError::IdempotentParameterMismatch => {
                "Specified idempotent parameters do not match the original request".to_string()
            }
            EngineError::ItemCollectionSizeLimitExceeded => ITEM_COLLECTION_MESSAGE.to_string(),
            EngineError::ExpiredIterator => "Iterator expired: shard iterators are valid for 15 minutes".to_string(),
            EngineError::TrimmedDataAccess => "The data you are trying to access has been trimmed".to_string(),
            EngineError::TransactionInProgress => {
                "Transaction is in progress with the same ClientRequestToken".to_string()
            }
            EngineError::Throttled { provisioned: true, .. } => PROVISIONED_EXCEEDED_MESSAGE.to_string(),
            EngineError::Throttled { provisioned: false, reason, .. } if reason.starts_with("Index") => {
                INDEX_THROTTLING_MESSAGE.to_string()
            }
            EngineError::Throttled { provisioned: false, .. } => THROTTLING_MESSAGE.to_string(),
        }
    }

    /// "Requested resource not found" for item operations.
    pub(crate) fn table_not_found() -> EngineError {
        EngineError::ResourceNotFound("Requested resource not found".to_string())
    }

    /// The longer form that table-level operations use.
    pub(crate) fn table_not_found_named(name: &str) -> EngineError {
        EngineError::ResourceNotFound(format!("Requested resource not found: Table: {name} not found"))
    }

    pub(crate) fn validation(message: impl Into<String>) -> EngineError {
        EngineError::Validation(message.into())
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for EngineError {}

impl From<dynaburst_expr::ExprError> for EngineError {
    fn from(e: dynaburst_expr::ExprError) -> EngineError {
        EngineError::Validation(e.message)
    }
}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> EngineError {
        EngineError::Internal(e)
    }
}
