//! The DynamoDB data model: attribute values, exact decimal numbers, item
//! size and capacity-unit arithmetic.
//!
//! Architecture invariant: this crate knows nothing of JSON, HTTP, clocks or
//! tables. It is plain data and arithmetic.

pub mod codec;
mod number;
pub mod time;
mod units;
mod value;

pub use number::{invalid_number_message, Number, NumberError, INVALID_NUMBER, MAX_SIGNIFICANT_DIGITS};
pub use units::{
    read_units, transactional_write_units, write_units, ReadKind, MAX_ITEM_BYTES, READ_UNIT_BYTES, WRITE_UNIT_BYTES,
};
/// A point in time: milliseconds since the Unix epoch, or since the start
/// of a virtual clock. Nothing below the server reads a clock: every
/// operation that depends on time takes `now` as an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Millis(pub u64);

pub use value::{item_size, AttributeValue, Item, KeyValue, ScalarType, ValueType};
