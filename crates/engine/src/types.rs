//! Typed requests and responses of the engine's operations. Plain data: the
//! wire layer builds these from DynamoDB JSON and renders the outputs.

use std::collections::HashMap;

use dynaburst_model::{AttributeValue, Item, ScalarType};

pub use dynaburst_model::{KeyValue, Millis};

/// ExpressionAttributeNames.
pub type Names = HashMap<String, String>;
/// ExpressionAttributeValues.
pub type Values = HashMap<String, AttributeValue>;

/// HASH or RANGE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRole {
    Hash,
    Range,
}

/// How a table is billed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BillingMode {
    PayPerRequest,
    Provisioned { read: u64, write: u64 },
}

/// ReturnConsumedCapacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReturnCapacity {
    #[default]
    None,
    Total,
    Indexes,
}

/// ReturnValues.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReturnValues {
    #[default]
    None,
    AllOld,
    UpdatedOld,
    AllNew,
    UpdatedNew,
}

/// Select for Query and Scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    AllAttributes,
    AllProjectedAttributes,
    SpecificAttributes,
    Count,
}

/// Units consumed by one table in one request.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsumedCapacity {
    pub table_name: String,
    pub read_units: f64,
    pub write_units: f64,
    /// With INDEXES: the per-table breakdown is included.
    pub include_table_detail: bool,
    /// Units spent on each secondary index (LSI units are billed to the
    /// table but reported apart, S58).
    pub indexes: Vec<IndexCapacity>,
}

/// The units one request spent on one secondary index.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexCapacity {
    pub name: String,
    pub global: bool,
    pub read_units: f64,
    pub write_units: f64,
}

impl ConsumedCapacity {
    /// Read plus write units, the table's and every index's (S57).
    pub fn total(&self) -> f64 {
        self.total_read() + self.total_write()
    }

    /// Read units, the table's and every index's.
    pub fn total_read(&self) -> f64 {
        self.read_units + self.indexes.iter().map(|i| i.read_units).sum::<f64>()
    }

    /// Write units, the table's and every index's.
    pub fn total_write(&self) -> f64 {
        self.write_units + self.indexes.iter().map(|i| i.write_units).sum::<f64>()
    }

    /// The table's own units.
    pub fn table_total(&self) -> f64 {
        self.read_units + self.write_units
    }

    /// Adds units spent on index `name`.
    pub fn add_index(&mut self, name: &str, global: bool, read: f64, write: f64) {
        match self.indexes.iter_mut().find(|i| i.name == name) {
            Some(i) => {
                i.read_units += read;
                i.write_units += write;
            }
            None => self.indexes.push(IndexCapacity {
                name: name.to_string(),
                global,
                read_units: read,
                write_units: write,
            }),
        }
    }
}

/// The parts of expressions a request carries, shared by its expressions.
#[derive(Clone, Debug, Default)]
pub struct ExprArgs {
    pub names: Option<Names>,
    pub values: Option<Values>,
}

#[derive(Clone, Debug)]
pub struct CreateTableInput {
    pub table_name: String,
    pub key_schema: Vec<(String, KeyRole)>,
    pub attribute_definitions: Vec<(String, ScalarType)>,
    pub billing: BillingMode,
    /// GlobalSecondaryIndexes (None when absent: an empty list is refused).
    pub global_indexes: Option<Vec<IndexSpec>>,
    /// LocalSecondaryIndexes, likewise.
    pub local_indexes: Option<Vec<IndexSpec>>,
    /// Tags (key, value).
    pub tags: Vec<(String, String)>,
    /// StreamSpecification: (StreamEnabled, StreamViewType).
    pub stream: Option<(bool, Option<crate::stream::StreamViewType>)>,
    /// OnDemandThroughput: (MaxReadRequestUnits, MaxWriteRequestUnits),
    /// each -1 for no maximum, absent to keep the current one.
    pub on_demand: Option<(Option<i64>, Option<i64>)>,
    /// WarmThroughput: (ReadUnitsPerSecond, WriteUnitsPerSecond).
    pub warm: Option<(Option<u64>, Option<u64>)>,
    /// DeletionProtectionEnabled.
    pub deletion_protection: Option<bool>,
    /// TableClass.
    pub table_class: Option<crate::table::TableClass>,
    /// SSESpecification.
    pub sse: Option<SseSpec>,
    /// ResourcePolicy, checked and canonical (the wire layer's).
    pub resource_policy: Option<crate::policy::PolicyDocument>,
}

/// An SSESpecification: `enabled` for a KMS key (the one named, else the
/// AWS managed key of DynamoDB), not for an AWS owned key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseSpec {
    pub enabled: bool,
    pub kms_key_id: Option<String>,
}

impl CreateTableInput {
    /// A table with this key and billing and nothing else: no indexes,
    /// tags, stream, on-demand maximum or warm throughput. Set the others
    /// with struct update syntax (`CreateTableInput { stream: .., ..new }`).
    pub fn new(
        table_name: impl Into<String>,
        key_schema: Vec<(String, KeyRole)>,
        attribute_definitions: Vec<(String, ScalarType)>,
        billing: BillingMode,
    ) -> Self {
        Self {
            table_name: table_name.into(),
            key_schema,
            attribute_definitions,
            billing,
            global_indexes: None,
            local_indexes: None,
            tags: Vec::new(),
            stream: None,
            on_demand: None,
            warm: None,
            deletion_protection: None,
            table_class: None,
            sse: None,
            resource_policy: None,
        }
    }
}

/// ProjectionType.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectionType {
    All,
    KeysOnly,
    Include,
}

/// One index of a CreateTable (or an UpdateTable Create), as sent.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexSpec {
    pub name: String,
    pub key_schema: Vec<(String, KeyRole)>,
    /// None when the Projection has no ProjectionType.
    pub projection_type: Option<ProjectionType>,
    pub non_key_attributes: Option<Vec<String>>,
    /// A GSI's ProvisionedThroughput (read, write).
    pub throughput: Option<(u64, u64)>,
    /// A GSI's OnDemandThroughput (MaxReadRequestUnits,
    /// MaxWriteRequestUnits), each None when not sent.
    pub on_demand: Option<(Option<i64>, Option<i64>)>,
    /// A GSI's WarmThroughput (ReadUnitsPerSecond, WriteUnitsPerSecond),
    /// each None when not sent.
    pub warm: Option<(Option<u64>, Option<u64>)>,
}

/// An index as DescribeTable shows it.
#[derive(Clone, Debug)]
pub struct IndexDescription {
    pub def: crate::index::IndexDef,
    pub arn: String,
    /// CREATING while a backfill runs, else ACTIVE.
    pub status: &'static str,
    pub item_count: u64,
    pub size_bytes: u64,
    /// A GSI's (read, write) warm throughput, when the capacity model is on.
    pub warm_throughput: Option<(f64, f64)>,
}

#[derive(Clone, Debug)]
pub struct UpdateTableInput {
    pub table_name: String,
    /// `Some(true)` for PAY_PER_REQUEST, `Some(false)` for PROVISIONED.
    pub billing_mode_pay_per_request: Option<bool>,
    pub throughput: Option<(u64, u64)>,
    /// AttributeDefinitions sent with the update (the key attributes of a
    /// GSI it creates must be among them, S40).
    pub attribute_definitions: Vec<(String, ScalarType)>,
    /// GlobalSecondaryIndexUpdates (None when absent).
    pub index_updates: Option<Vec<IndexUpdate>>,
    /// StreamSpecification: (StreamEnabled, StreamViewType).
    pub stream: Option<(bool, Option<crate::stream::StreamViewType>)>,
    /// OnDemandThroughput, as in [`CreateTableInput::on_demand`].
    pub on_demand: Option<(Option<i64>, Option<i64>)>,
    /// WarmThroughput, as in [`CreateTableInput::warm`].
    pub warm: Option<(Option<u64>, Option<u64>)>,
    /// DeletionProtectionEnabled, TableClass and SSESpecification, as in
    /// [`CreateTableInput`].
    pub deletion_protection: Option<bool>,
    pub table_class: Option<crate::table::TableClass>,
    pub sse: Option<SseSpec>,
    /// Members of the request this server does not model (global tables'
    /// ReplicaUpdates, MultiRegionConsistency, ...): a request with only
    /// those changes nothing, and its refusal leaves them out of the list
    /// of what it could change, as DynamoDB's does.
    pub unmodelled: Vec<&'static str>,
}

impl UpdateTableInput {
    /// An UpdateTable of `table_name` that asks for nothing yet: set what it
    /// changes with struct update syntax.
    pub fn new(table_name: impl Into<String>) -> Self {
        Self {
            table_name: table_name.into(),
            billing_mode_pay_per_request: None,
            throughput: None,
            attribute_definitions: Vec::new(),
            index_updates: None,
            stream: None,
            on_demand: None,
            warm: None,
            deletion_protection: None,
            table_class: None,
            sse: None,
            unmodelled: Vec::new(),
        }
    }
}

/// One GlobalSecondaryIndexUpdate.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexUpdate {
    Create(IndexSpec),
    /// A GSI's new provisioned (read, write) units, on-demand maxima or
    /// warm throughput (at least one of them).
    Update {
        name: String,
        throughput: Option<(u64, u64)>,
        on_demand: Option<(Option<i64>, Option<i64>)>,
        warm: Option<(Option<u64>, Option<u64>)>,
    },
    Delete {
        name: String,
    },
}

impl IndexUpdate {
    /// The index it names.
    pub fn index_name(&self) -> &str {
        match self {
            IndexUpdate::Create(spec) => &spec.name,
            IndexUpdate::Update { name, .. } | IndexUpdate::Delete { name } => name,
        }
    }
}

/// A snapshot of a table for DescribeTable and friends.
#[derive(Clone, Debug)]
pub struct TableDescription {
    pub table_name: String,
    pub table_id: String,
    pub arn: String,
    pub status: &'static str,
    pub key_schema: Vec<(String, KeyRole)>,
    pub attribute_definitions: Vec<(String, ScalarType)>,
    /// Billing mode and the history of throughput changes.
    pub settings: crate::table::TableSettings,
    pub created_at: Millis,
    pub item_count: u64,
    pub size_bytes: u64,
    /// (read, write) units per second the table takes at once, when the
    /// capacity model is on.
    pub warm_throughput: Option<(f64, f64)>,
    /// Current partition count, when the capacity model is on.
    pub partition_count: Option<usize>,
    /// The secondary indexes, GSIs then LSIs, in definition order.
    pub indexes: Vec<IndexDescription>,
    /// RestoreSummary, for a table restored from a backup.
    pub restore: Option<crate::backup::RestoreSummary>,
}

#[derive(Clone, Debug)]
pub struct ListTablesInput {
    pub exclusive_start: Option<String>,
    pub limit: usize,
}

#[derive(Clone, Debug)]
pub struct ListTablesOutput {
    pub names: Vec<String>,
    pub last_evaluated: Option<String>,
}

/// The options PutItem, DeleteItem and UpdateItem share.
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    /// ConditionExpression.
    pub condition: Option<String>,
    /// ExpressionAttributeNames and ExpressionAttributeValues.
    pub expr: ExprArgs,
    pub return_values: ReturnValues,
    pub return_capacity: ReturnCapacity,
    /// ReturnValuesOnConditionCheckFailure ALL_OLD.
    pub return_old_on_condition_failure: bool,
    /// ReturnItemCollectionMetrics SIZE.
    pub return_item_collection_metrics: bool,
}

#[derive(Clone, Debug)]
pub struct PutItemInput {
    pub table_name: String,
    pub item: Item,
    pub options: WriteOptions,
}

#[derive(Clone, Debug, Default)]
pub struct WriteOutput {
    pub attributes: Option<Item>,
    pub consumed: Option<ConsumedCapacity>,
    /// The written item's collection, when asked for and the table has
    /// local secondary indexes (S60).
    pub item_collection: Option<ItemCollection>,
}

/// ItemCollectionMetrics: an item collection's partition key and size.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemCollection {
    /// The partition-key attribute and its value.
    pub key: Item,
    pub size_bytes: u64,
}

#[derive(Clone, Debug)]
pub struct GetItemInput {
    pub table_name: String,
    pub key: Item,
    pub projection: Option<String>,
    pub names: Option<Names>,
    pub consistent_read: bool,
    pub return_capacity: ReturnCapacity,
}

#[derive(Clone, Debug, Default)]
pub struct GetItemOutput {
    pub item: Option<Item>,
    pub consumed: Option<ConsumedCapacity>,
}

#[derive(Clone, Debug)]
pub struct DeleteItemInput {
    pub table_name: String,
    pub key: Item,
    pub options: WriteOptions,
}

#[derive(Clone, Debug)]
pub struct UpdateItemInput {
    pub table_name: String,
    pub key: Item,
    /// UpdateExpression.
    pub update: Option<String>,
    pub options: WriteOptions,
    /// When the item does not exist, write nothing: the legacy
    /// AttributeUpdates made only of DELETE actions, which "do nothing" on
    /// a missing item. (An UpdateExpression made only of REMOVE and DELETE
    /// actions writes nothing there either, whatever this says.)
    pub keep_missing: bool,
}

/// One request of a BatchWriteItem.
#[derive(Clone, Debug)]
pub enum WriteRequest {
    Put(Item),
    Delete(Item),
}

impl WriteRequest {
    /// The item a PutRequest writes.
    pub fn put_item(&self) -> Option<&Item> {
        match self {
            WriteRequest::Put(item) => Some(item),
            WriteRequest::Delete(_) => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct BatchWriteInput {
    /// Table name to its requests, in request order.
    pub requests: Vec<(String, Vec<WriteRequest>)>,
    pub return_capacity: ReturnCapacity,
    /// ReturnItemCollectionMetrics SIZE.
    pub return_item_collection_metrics: bool,
}

#[derive(Clone, Debug, Default)]
pub struct BatchWriteOutput {
    pub unprocessed: Vec<(String, Vec<WriteRequest>)>,
    pub consumed: Vec<ConsumedCapacity>,
    /// Per table (as named), the collections the batch changed.
    pub item_collections: Vec<(String, Vec<ItemCollection>)>,
}

/// The keys to read from one table in a BatchGetItem.
#[derive(Clone, Debug)]
pub struct KeysAndAttributes {
    pub keys: Vec<Item>,
    pub projection: Option<String>,
    pub names: Option<Names>,
    pub consistent_read: bool,
}

#[derive(Clone, Debug)]
pub struct BatchGetInput {
    pub requests: Vec<(String, KeysAndAttributes)>,
    pub return_capacity: ReturnCapacity,
}

#[derive(Clone, Debug, Default)]
pub struct BatchGetOutput {
    pub responses: Vec<(String, Vec<Item>)>,
    pub unprocessed: Vec<(String, KeysAndAttributes)>,
    pub consumed: Vec<ConsumedCapacity>,
}

/// One action of TransactWriteItems: what it does to which item, and the
/// members every kind shares.
#[derive(Clone, Debug)]
pub struct TransactAction {
    pub table_name: String,
    pub op: TransactOp,
    /// ConditionExpression; a ConditionCheck must have one (the wire layer
    /// requires it; the engine reads a missing one as an empty expression).
    pub condition: Option<String>,
    pub expr: ExprArgs,
    /// ReturnValuesOnConditionCheckFailure ALL_OLD.
    pub return_old_on_failure: bool,
}

/// What a [`TransactAction`] does.
#[derive(Clone, Debug)]
pub enum TransactOp {
    Put { item: Item },
    Update { key: Item, update: String },
    Delete { key: Item },
    ConditionCheck { key: Item },
}

#[derive(Clone, Debug)]
pub struct TransactWriteInput {
    pub actions: Vec<TransactAction>,
    /// ClientRequestToken and a fingerprint of the request's parameters
    /// (computed by the caller from the canonical request), for idempotency.
    pub client_token: Option<(String, u64)>,
    pub return_capacity: ReturnCapacity,
    /// ReturnItemCollectionMetrics SIZE.
    pub return_item_collection_metrics: bool,
}

#[derive(Clone, Debug, Default)]
pub struct TransactWriteOutput {
    pub consumed: Vec<ConsumedCapacity>,
    /// Per table (as named), the collections the transaction changed.
    pub item_collections: Vec<(String, Vec<ItemCollection>)>,
}

/// One reason of a TransactionCanceledException, in request order.
#[derive(Clone, Debug, PartialEq)]
pub struct CancellationReason {
    /// "None", "ConditionalCheckFailed", "ValidationError", …
    pub code: &'static str,
    pub message: Option<String>,
    pub item: Option<Item>,
}

#[derive(Clone, Debug)]
pub struct TransactGet {
    pub table_name: String,
    pub key: Item,
    pub projection: Option<String>,
    pub names: Option<Names>,
}

#[derive(Clone, Debug)]
pub struct TransactGetInput {
    pub gets: Vec<TransactGet>,
    pub return_capacity: ReturnCapacity,
}

#[derive(Clone, Debug, Default)]
pub struct TransactGetOutput {
    /// One entry per Get, in order; None when the item does not exist.
    pub items: Vec<Option<Item>>,
    pub consumed: Vec<ConsumedCapacity>,
}

/// Query and Scan share one input; `key_condition` is set for Query,
/// `segment` only for Scan.
#[derive(Clone, Debug)]
pub struct ReadInput {
    pub table_name: String,
    pub index_name: Option<String>,
    pub key_condition: Option<String>,
    pub filter: Option<String>,
    pub projection: Option<String>,
    pub expr: ExprArgs,
    pub select: Option<Select>,
    pub limit: Option<usize>,
    pub exclusive_start_key: Option<Item>,
    pub forward: bool,
    pub consistent_read: bool,
    /// (Segment, TotalSegments) for a parallel Scan.
    pub segment: Option<(u32, u32)>,
    pub return_capacity: ReturnCapacity,
}

impl ReadInput {
    /// A whole-table Scan of `table_name`: every other member at its
    /// default (forward, eventually consistent, no limit, no expressions).
    pub fn scan(table_name: impl Into<String>) -> ReadInput {
        ReadInput {
            table_name: table_name.into(),
            index_name: None,
            key_condition: None,
            filter: None,
            projection: None,
            expr: ExprArgs::default(),
            select: None,
            limit: None,
            exclusive_start_key: None,
            forward: true,
            consistent_read: false,
            segment: None,
            return_capacity: ReturnCapacity::None,
        }
    }

    /// A Query of `table_name` with `key_condition`, otherwise as [`ReadInput::scan`].
    pub fn query(table_name: impl Into<String>, key_condition: impl Into<String>) -> ReadInput {
        ReadInput { key_condition: Some(key_condition.into()), ..ReadInput::scan(table_name) }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ReadOutput {
    /// Items returned (empty for Select COUNT).
    pub items: Vec<Item>,
    pub count: usize,
    pub scanned_count: usize,
    pub last_evaluated_key: Option<Item>,
    pub consumed: Option<ConsumedCapacity>,
    /// True for Select COUNT: the response carries no Items member.
    pub count_only: bool,
}
