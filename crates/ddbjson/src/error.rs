//! Why a JSON value is not a DynamoDB attribute value. `Display` gives
//! DynamoDB's exact message.

use std::fmt;

use dynaburst_model::NumberError;

/// The error class DynamoDB answers an invalid value with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// SerializationException: the JSON does not have the expected shape.
    Serialization,
    /// ValidationException: the shape is right, the value is not allowed.
    Validation,
}

/// The kind of an empty set, which DynamoDB words differently for each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetType {
    String,
    Number,
    Binary,
}

/// An invalid attribute value or item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// A member of the wrong JSON type: `found` is Jackson's token name
    /// (`START_ARRAY`, …), `target` the type DynamoDB wanted.
    WrongJsonType { found: &'static str, target: &'static str },
    /// A B or BS element that is not base64.
    InvalidBase64,
    /// An N or NS element that is not a storable number.
    Number(NumberError),
    /// An N or NS element that is not a number at all: its text.
    NotANumber(String),
    /// Lists and maps nested deeper than [`crate::MAX_NESTING_DEPTH`].
    TooDeep,
    /// More than one type descriptor set.
    SeveralTypes,
    /// No type descriptor set.
    NoType,
    /// `{"NULL": false}`.
    NullNotTrue,
    /// An empty SS, NS or BS.
    EmptySet(SetType),
    /// A string set with a duplicate: its strings as DynamoDB shows them.
    DuplicateStrings(Vec<String>),
    /// A number or binary set with a duplicate.
    Duplicates,
}

impl Error {
    /// The error class DynamoDB answers with.
    pub fn class(&self) -> ErrorClass {
        match self {
            Error::WrongJsonType { .. } | Error::InvalidBase64 => ErrorClass::Serialization,
            _ => ErrorClass::Validation,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const INVALID: &str = "One or more parameter values were invalid: ";
        match self {
            Error::WrongJsonType { found, target } => write!(f, "{found} cannot be converted to {target}"),
            Error::InvalidBase64 => {
                f.write_str("Base64 encoded length is expected a multiple of 4 bytes but found: invalid base64")
            }
            Error::Number(e) => write!(f, "{e}"),
            Error::NotANumber(text) => f.write_str(&dynaburst_model::invalid_number_message(text)),
            // DynamoDB's whole text (captured from eu-west-2, 2026-06, by a
            // conformance suite the public index holds).
            Error::TooDeep => f.write_str(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
            ),
            Error::SeveralTypes => f.write_str(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ),
            Error::NoType => {
                f.write_str("Supplied AttributeValue is empty, must contain exactly one of the supported datatypes")
            }
            Error::NullNotTrue => write!(f, "{INVALID}Null attribute value types must have the value of true"),
            // DynamoDB's own wording, double space included.
            Error::EmptySet(SetType::String) => write!(f, "{INVALID}An string set  may not be empty"),
            Error::EmptySet(SetType::Number) => write!(f, "{INVALID}An number set  may not be empty"),
            Error::EmptySet(SetType::Binary) => write!(f, "{INVALID}Binary sets should not be empty"),
            Error::DuplicateStrings(shown) => {
                write!(f, "{INVALID}Input collection [{}] contains duplicates.", shown.join(", "))
            }
            Error::Duplicates => write!(f, "{INVALID}Input collection contains duplicates."),
        }
    }
}

impl std::error::Error for Error {}
