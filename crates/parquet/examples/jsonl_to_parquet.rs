//! Converts flat JSON Lines (such as `dynaburst gen people`) to Parquet,
//! for the loader benchmark (`bench/loader/parquet.sh`): each field's type
//! comes from the first line (string: Utf8, integer: Int64, other number:
//! Float64, boolean: Boolean), Snappy pages, row groups of 100,000 rows.
//!
//! cargo run --release -p dynaburst-parquet --example jsonl_to_parquet -- IN.jsonl OUT.parquet

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::sync::Arc;

use arrow_array::builder::{ArrayBuilder, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde_json::{Map, Value};

const BATCH_ROWS: usize = 8_192;
const ROW_GROUP_ROWS: usize = 100_000;

enum Column {
    S(StringBuilder),
    I(Int64Builder),
    F(Float64Builder),
    B(BooleanBuilder),
}

impl Column {
    fn of(v: &Value) -> Result<(Column, DataType), String> {
        Ok(match v {
            Value::String(_) => (Column::S(StringBuilder::new()), DataType::Utf8),
            Value::Number(n) if n.is_i64() => (Column::I(Int64Builder::new()), DataType::Int64),
            Value::Number(_) => (Column::F(Float64Builder::new()), DataType::Float64),
            Value::Bool(_) => (Column::B(BooleanBuilder::new()), DataType::Boolean),
            other => return Err(format!("only flat records: {other}")),
        })
    }

    fn push(&mut self, v: Option<&Value>) -> Result<(), String> {
        let bad = || format!("a value of another type than the first line's: {v:?}");
        match (self, v) {
            (Column::S(b), Some(Value::String(s))) => b.append_value(s),
            (Column::I(b), Some(Value::Number(n))) => b.append_value(n.as_i64().ok_or_else(bad)?),
            (Column::F(b), Some(Value::Number(n))) => b.append_value(n.as_f64().ok_or_else(bad)?),
            (Column::B(b), Some(Value::Bool(x))) => b.append_value(*x),
            (Column::S(b), None | Some(Value::Null)) => b.append_null(),
            (Column::I(b), None | Some(Value::Null)) => b.append_null(),
            (Column::F(b), None | Some(Value::Null)) => b.append_null(),
            (Column::B(b), None | Some(Value::Null)) => b.append_null(),
            _ => return Err(bad()),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Column::S(b) => Arc::new(b.finish()),
            Column::I(b) => Arc::new(b.finish()),
            Column::F(b) => Arc::new(b.finish()),
            Column::B(b) => Arc::new(b.finish()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Column::S(b) => b.len(),
            Column::I(b) => b.len(),
            Column::F(b) => b.len(),
            Column::B(b) => b.len(),
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = &args[..] else {
        return Err("usage: jsonl_to_parquet IN.jsonl OUT.parquet".into());
    };
    let mut lines = BufReader::new(std::fs::File::open(input)?).lines();
    let first: Map<String, Value> = match lines.next() {
        Some(line) => serde_json::from_str(&line?)?,
        None => return Err("empty input".into()),
    };
    let mut names = Vec::new();
    let mut columns = Vec::new();
    let mut fields = Vec::new();
    for (name, v) in &first {
        let (column, ty) = Column::of(v)?;
        names.push(name.clone());
        columns.push(column);
        fields.push(Field::new(name, ty, true));
    }
    let schema = Arc::new(Schema::new(fields));
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    let mut writer = ArrowWriter::try_new(std::fs::File::create(output)?, schema.clone(), Some(props))?;
    let mut flush = |columns: &mut Vec<Column>| -> Result<(), Box<dyn Error>> {
        let arrays = columns.iter_mut().map(Column::finish).collect();
        writer.write(&RecordBatch::try_new(schema.clone(), arrays)?)?;
        Ok(())
    };
    let mut rows = 0u64;
    let mut record = first;
    loop {
        for (name, column) in names.iter().zip(columns.iter_mut()) {
            column.push(record.get(name))?;
        }
        rows += 1;
        if columns[0].len() >= BATCH_ROWS {
            flush(&mut columns)?;
        }
        match lines.next() {
            Some(line) => record = serde_json::from_str(&line?)?,
            None => break,
        }
    }
    if columns[0].len() > 0 {
        flush(&mut columns)?;
    }
    writer.close()?;
    eprintln!("{rows} rows to {output}");
    Ok(())
}
