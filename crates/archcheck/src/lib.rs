//! No code: this crate holds the tests that keep ARCHITECTURE.md true.
//!
//! `tests/dependency_edges.rs` reads the workspace's dependency graph from
//! `cargo metadata` and fails when a crate depends on something its layer
//! may not: a workspace crate outside its allowed list, an external crate
//! that belongs to another layer (the AWS SDK outside the DynamoDB target,
//! the MongoDB driver outside the MongoDB target, HTTP outside the server
//! and the load generator, JSON or tokio in the pure core), or, through any
//! chain, the server stack on the client side.
