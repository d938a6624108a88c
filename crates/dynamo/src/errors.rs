//! The one classification of DynamoDB errors, and the typed errors of this
//! crate.
//!
//! Every caller (the load sink, `count` and `purge`, the bench's client)
//! asks [`classify`] what an error answer means, so a code the loader backs
//! off on is never one another caller gives up on:
//!
//! - **Throttling**: "slow down" (the SDKs' throttling list, E3/E14, and
//!   any HTTP 429). Retried after a backoff; the load's controller lowers
//!   its concurrency.
//! - **Retryable**: no answer (network, timeout) or a server-side failure
//!   (HTTP 5xx, `InternalServerError`). Retried after a backoff.
//! - **Invalid**: the request was refused for what it holds (validation,
//!   serialization, any other 4xx). Sending it again cannot help; a load
//!   splits it to find the record at fault.
//! - **Fatal**: going on cannot help anything (missing table, bad
//!   credentials).

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{DisplayErrorContext, ProvideErrorMetadata, SdkError};

/// Error codes that mean "slow down" (the SDKs' throttling list, E3/E14).
pub const THROTTLING_CODES: &[&str] = &[
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "Throttling",
    "ThrottledException",
    "RequestThrottledException",
    "RequestLimitExceeded",
    "TooManyRequestsException",
    "TransactionInProgressException",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
];

/// Error codes after which going on cannot help.
pub const FATAL_CODES: &[&str] = &[
    "ResourceNotFoundException",
    "AccessDeniedException",
    "UnrecognizedClientException",
    "MissingAuthenticationTokenException",
    "InvalidSignatureException",
    "ExpiredTokenException",
    "IncompleteSignatureException",
    "UnknownOperationException",
];

/// Cancellation reasons of a TransactWriteItems that mean "slow down"
/// rather than "this item is refused".
pub const THROTTLING_CANCELLATION_REASONS: &[&str] =
    &["ThrottlingError", "ProvisionedThroughputExceeded", "TransactionConflict"];

/// What an error answer means for whoever sent the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    Throttling,
    Retryable,
    Invalid,
    Fatal,
}

impl ErrorClass {
    /// True when sending the same request again, later, can succeed.
    pub fn is_retryable(self) -> bool {
        matches!(self, ErrorClass::Throttling | ErrorClass::Retryable)
    }
}

/// Classifies a service's error answer by its code and HTTP status.
pub fn classify_code(code: &str, status: u16) -> ErrorClass {
    if THROTTLING_CODES.contains(&code) || status == 429 {
        ErrorClass::Throttling
    } else if code == "ValidationException" || code == "SerializationException" {
        ErrorClass::Invalid
    } else if FATAL_CODES.contains(&code) {
        ErrorClass::Fatal
    } else if status >= 500 {
        ErrorClass::Retryable
    } else {
        ErrorClass::Invalid
    }
}

/// Classifies a TransactWriteItems cancellation by its reasons' codes
/// ("None" for items that were fine): throttling when every reason is.
pub fn classify_cancellation<'a>(mut codes: impl Iterator<Item = &'a str>) -> ErrorClass {
    if codes.all(|c| c == "None" || THROTTLING_CANCELLATION_REASONS.contains(&c)) {
        ErrorClass::Throttling
    } else {
        ErrorClass::Invalid
    }
}

/// Classifies an SDK error: a service answer by its code and status, and
/// anything without an answer (network, timeout) as retryable.
pub fn classify<E: ProvideErrorMetadata>(err: &SdkError<E, HttpResponse>) -> ErrorClass {
    match err {
        SdkError::ServiceError(e) => classify_code(e.err().code().unwrap_or(""), e.raw().status().as_u16()),
        _ => ErrorClass::Retryable,
    }
}

/// An SDK error as a person should read it, in one short line: the
/// service's code and message when it answered, else what went wrong on
/// the way ([`transport_text`]), never the SDK's debug structures.
pub fn error_text<E: ProvideErrorMetadata + std::error::Error + 'static>(err: &SdkError<E, HttpResponse>) -> String {
    match err {
        SdkError::ServiceError(e) => {
            format!("{}: {}", e.err().code().unwrap_or("error"), e.err().message().unwrap_or("(no message)"))
        }
        other => transport_text(other).unwrap_or_else(|| format!("{}", DisplayErrorContext(other))),
    }
}

/// What went wrong when no answer came back, in one short line: "cannot
/// connect to the endpoint (Connection refused (os error 111))", "no
/// answer in time from the endpoint", ... None for an answer from the
/// service.
pub fn transport_text<E: std::error::Error + 'static>(err: &SdkError<E, HttpResponse>) -> Option<String> {
    let (what, cause) = transport_failure(err)?;
    Some(format!("{} ({cause})", what.text()))
}

/// Why no answer came back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unanswered {
    /// Nothing listens there, or the host cannot be reached or resolved.
    CannotConnect,
    /// No answer within the request timeout.
    Timeout,
    /// The request could not be built (often a malformed endpoint URL).
    Construction,
    /// Something answered, but not as DynamoDB does.
    NotDynamoDb,
    /// Any other failure on the way.
    Other,
}

impl Unanswered {
    fn text(self) -> &'static str {
        match self {
            Unanswered::CannotConnect => "cannot connect to the endpoint",
            Unanswered::Timeout => "no answer in time from the endpoint",
            Unanswered::Construction => "cannot build the request (is the endpoint URL right?)",
            Unanswered::NotDynamoDb => "the endpoint's answer is not a DynamoDB answer",
            Unanswered::Other => "the request failed",
        }
    }
}

/// Why no answer came back, and the innermost cause in its own words.
/// True when the request may succeed if sent again soon: a retryable
/// answer or a lost connection, but not an endpoint where nothing listens
/// (said at once rather than after a minute of retries).
pub fn worth_retrying_at_set_up<E: std::error::Error + ProvideErrorMetadata + 'static>(
    err: &SdkError<E, HttpResponse>,
) -> bool {
    classify(err).is_retryable() && !matches!(transport_failure(err), Some((Unanswered::CannotConnect, _)))
}

fn transport_failure<E: std::error::Error + 'static>(err: &SdkError<E, HttpResponse>) -> Option<(Unanswered, String)> {
    let what = match err {
        SdkError::ServiceError(_) => return None,
        SdkError::DispatchFailure(d) if d.is_timeout() => Unanswered::Timeout,
        SdkError::DispatchFailure(d) if d.is_io() => Unanswered::CannotConnect,
        SdkError::DispatchFailure(_) => Unanswered::Other,
        SdkError::TimeoutError(_) => Unanswered::Timeout,
        SdkError::ConstructionFailure(_) => Unanswered::Construction,
        SdkError::ResponseError(_) => Unanswered::NotDynamoDb,
        _ => Unanswered::Other,
    };
    Some((what, root_cause(err)))
}

/// The innermost cause of an error: the operating system's or the
/// parser's own words ("Connection refused (os error 111)").
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Why a DynamoDB call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum DynamoError {
    /// The table does not exist.
    Missing { table: String },
    /// The endpoint answered with an error.
    Request { operation: String, class: ErrorClass, text: String },
    /// Nothing answered: no server there, a wrong address, a timeout.
    Unreachable { operation: String, what: Unanswered, cause: String },
    /// A retried call made no progress.
    GaveUp { operation: String, attempts: u32, last: String },
    /// A request could not be built from what was given.
    Build { operation: &'static str, text: String },
    /// The table did not become ACTIVE in time.
    NotActive { table: String, waited_s: u64 },
    /// DescribeTable's answer lacks what the loader needs.
    Description { table: String, missing: &'static str },
    /// A worker task failed (panicked or was cancelled).
    Task(String),
}

impl DynamoError {
    /// The error of an SDK call.
    pub fn request<E>(operation: impl Into<String>, err: &SdkError<E, HttpResponse>) -> DynamoError
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        if let Some((what, cause)) = transport_failure(err).filter(|(w, _)| *w != Unanswered::NotDynamoDb) {
            return DynamoError::Unreachable { operation: operation.into(), what, cause };
        }
        DynamoError::Request { operation: operation.into(), class: classify(err), text: error_text(err) }
    }

    /// The error as a person should read it, with the endpoint it concerns
    /// and what to do when nothing answered there.
    pub fn explain(&self, endpoint: &str) -> String {
        match self {
            DynamoError::Unreachable { what: Unanswered::CannotConnect, cause, .. } => {
                format!("cannot connect to {endpoint}: is the server running, and is the URL right? ({cause})")
            }
            DynamoError::Unreachable { what: Unanswered::Timeout, cause, .. } => {
                format!("no answer from {endpoint} in time: is it the right endpoint, and reachable? ({cause})")
            }
            DynamoError::Unreachable { operation, what, cause } => {
                format!("{operation} at {endpoint}: {} ({cause})", what.text())
            }
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for DynamoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DynamoError::Missing { table } => write!(f, "table {table} does not exist"),
            DynamoError::Request { operation, text, .. } => write!(f, "{operation}: {text}"),
            DynamoError::Unreachable { operation, what, cause } => write!(f, "{operation}: {} ({cause})", what.text()),
            DynamoError::GaveUp { operation, attempts, last } => {
                write!(f, "{operation}: gave up after {attempts} attempts: {last}")
            }
            DynamoError::Build { operation, text } => write!(f, "{operation}: cannot build the request: {text}"),
            DynamoError::NotActive { table, waited_s } => write!(f, "table {table} was not ACTIVE after {waited_s} s"),
            DynamoError::Description { table, missing } => write!(f, "DescribeTable {table}: {missing}"),
            DynamoError::Task(m) => write!(f, "a worker task failed: {m}"),
        }
    }
}

impl std::error::Error for DynamoError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_classification_for_every_caller() {
        // The codes the three former lists named all keep their meaning.
        for code in ["ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"] {
            assert_eq!(classify_code(code, 400), ErrorClass::Throttling, "{code}");
        }
        assert_eq!(classify_code("InternalServerError", 500), ErrorClass::Retryable);
        assert_eq!(classify_code("ServiceUnavailable", 503), ErrorClass::Retryable);
        assert_eq!(classify_code("", 429), ErrorClass::Throttling, "HTTP 429 whatever the code");
        assert_eq!(classify_code("ValidationException", 400), ErrorClass::Invalid);
        assert_eq!(classify_code("SerializationException", 400), ErrorClass::Invalid);
        assert_eq!(classify_code("ConditionalCheckFailedException", 400), ErrorClass::Invalid);
        assert_eq!(classify_code("ResourceNotFoundException", 400), ErrorClass::Fatal);
        assert_eq!(classify_code("UnrecognizedClientException", 400), ErrorClass::Fatal);
        assert!(ErrorClass::Throttling.is_retryable() && ErrorClass::Retryable.is_retryable());
        assert!(!ErrorClass::Invalid.is_retryable() && !ErrorClass::Fatal.is_retryable());
        for code in THROTTLING_CODES {
            assert_eq!(classify_code(code, 400), ErrorClass::Throttling, "{code}");
            assert!(!FATAL_CODES.contains(code));
        }
    }

    #[test]
    fn a_cancellation_throttles_only_when_every_reason_does() {
        assert_eq!(classify_cancellation(["None", "ThrottlingError"].into_iter()), ErrorClass::Throttling);
        assert_eq!(classify_cancellation(["TransactionConflict"].into_iter()), ErrorClass::Throttling);
        assert_eq!(
            classify_cancellation(["ThrottlingError", "ConditionalCheckFailed"].into_iter()),
            ErrorClass::Invalid
        );
        assert_eq!(classify_cancellation(["ValidationError"].into_iter()), ErrorClass::Invalid);
    }
}
