//! The shape of the generated tables (see `generated.rs`).

/// Which service's model an operation belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Service {
    /// `DynamoDB_20120810.*`
    DynamoDb,
    /// `DynamoDBStreams_20120810.*`
    Streams,
}

impl Service {
    /// The `X-Amz-Target` prefix of the service's operations.
    pub fn target_prefix(self) -> &'static str {
        match self {
            Service::DynamoDb => "DynamoDB_20120810",
            Service::Streams => "DynamoDBStreams_20120810",
        }
    }

    /// The service of an `X-Amz-Target` prefix.
    pub fn from_target_prefix(prefix: &str) -> Option<Service> {
        match prefix {
            "DynamoDB_20120810" => Some(Service::DynamoDb),
            "DynamoDBStreams_20120810" => Some(Service::Streams),
            _ => None,
        }
    }
}

/// A shape's type; other shapes are referenced by their index in
/// [`crate::SHAPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Members in the model's order.
    Structure(&'static [Member]),
    /// Element shape.
    List(u16),
    /// Key shape, value shape.
    Map(u16, u16),
    String,
    Integer,
    Long,
    Boolean,
    Blob,
    Double,
    Timestamp,
}

/// One shape of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The model's name (also the Java class name DynamoDB's messages show).
    pub name: &'static str,
    pub kind: Kind,
    /// Shortest length (strings, lists, maps) or smallest value (numbers).
    pub min: Option<i64>,
    /// Longest length or largest value.
    pub max: Option<i64>,
    /// A Java regular expression the whole string must match.
    pub pattern: Option<&'static str>,
    /// Allowed values, in the order DynamoDB lists them in its message.
    pub enums: &'static [&'static str],
}

/// A member of a structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The JSON name (the json protocol uses member names as they are).
    pub name: &'static str,
    pub shape: u16,
    pub required: bool,
}

/// An operation and its input shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation {
    pub service: Service,
    pub name: &'static str,
    pub input: u16,
}
