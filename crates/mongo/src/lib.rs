//! MongoDB / DocumentDB as a load target: `dynaburst load FILE --target
//! mongodb://HOST:PORT/DB --collection C`, with the same pipeline and the
//! same guarantees as the DynamoDB path (nothing lost, rejects with their
//! lines, resume after a crash, adaptive concurrency).
//!
//! The only crate that links the official `mongodb` driver. `convert`
//! holds the pure part: records to BSON documents, document identity and
//! generated `_id`s, and the 16 MiB limit; `sink` sends the commands and
//! sorts their answers; `driver` connects, reads the server's limits and
//! runs a load.
//!
//! Architecture invariant: `convert` is pure (no I/O, no clock, no driver
//! calls); only `sink` and `driver`'s connection talk to the server. The
//! URI goes to the driver as given; only its redacted form (no password) is
//! ever written to a report, a checkpoint or the terminal.
//!
//! Only `convert` is built without the default `driver` feature: the fuzz
//! target of the conversion (fuzz/mongo) leaves the driver, its TLS stack
//! and the loader out of its instrumented build.

pub mod convert;
#[cfg(feature = "driver")]
mod driver;
#[cfg(feature = "driver")]
pub mod sink;

#[cfg(feature = "driver")]
pub use driver::*;
