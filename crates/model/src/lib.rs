//! The DynamoDB data model: attribute values, exact decimal numbers, item
//! size and capacity-unit arithmetic.
//!
//! Architecture invariant: this crate knows nothing of JSON, HTTP, clocks or
//! tables. It is plain data and arithmetic.

mod number;
mod units;
mod value;

pub use number::{Number, NumberError, MAX_SIGNIFICANT_DIGITS};
pub use units::{
    read_units, transactional_write_units, write_units, ReadKind, MAX_ITEM_BYTES, READ_UNIT_BYTES,
    WRITE_UNIT_BYTES,
};
pub use value::{item_size, AttributeValue, Item, KeyValue, ScalarType, ValueType};
