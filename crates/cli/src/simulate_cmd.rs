//! `dynaburst load --simulate`: the table's design from the endpoint (or
//! from flags), the load in virtual time (`dynaburst_simulate`), and its
//! report, per-second CSV and SVG chart.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use crate::usage;
use dynaburst_dynamo::{Billing, Endpoint, IndexInfo, KeySchema, TableInfo};
use dynaburst_engine::{BillingMode, IndexSpec, KeyRole, ProjectionType};
use dynaburst_input::InputSpec;
use dynaburst_loader::{Ending, Prices, Tuning};
use dynaburst_simulate::{SimOptions, TableDesign};

/// What `load --simulate` was given.
pub struct SimulateArgs {
    pub input: InputSpec,
    pub table: String,
    pub endpoint: Endpoint,
    pub key: Option<KeySchema>,
    pub billing: Billing,
    pub warm_write_units: Option<u64>,
    pub round_trip_ms: u64,
    pub tuning: Tuning,
    pub prices: Prices,
    pub report: Option<PathBuf>,
    pub timeline: Option<PathBuf>,
    pub chart: Option<PathBuf>,
    pub rejects: PathBuf,
}

fn index_spec(ix: &IndexInfo) -> IndexSpec {
    let key_schema = ix
        .hash
        .iter()
        .map(|(n, _)| (n.clone(), KeyRole::Hash))
        .chain(ix.range.iter().map(|(n, _)| (n.clone(), KeyRole::Range)))
        .collect();
    let (projection_type, non_key_attributes) = match &ix.projected {
        None => (ProjectionType::All, None),
        Some(p) if p.is_empty() => (ProjectionType::KeysOnly, None),
        Some(p) => (ProjectionType::Include, Some(p.clone())),
    };
    IndexSpec {
        name: ix.name.clone(),
        key_schema,
        projection_type: Some(projection_type),
        non_key_attributes,
        throughput: ix.provisioned_wcu.map(|w| (w, w)),
        // A GSI's own on-demand maximum and warm throughput limit a load
        // as the table's do (an LSI has neither).
        // (Only an on-demand GSI has maxima; a warm throughput is never below
        // what the index starts with, its units or the on-demand initial one.)
        on_demand: ix
            .max_write_request_units
            .filter(|_| ix.global && ix.provisioned_wcu.is_none())
            .map(|w| (None, Some(w as i64))),
        warm: ix
            .warm_write_units
            .filter(|_| ix.global)
            .map(|w| (None, Some(w.max(ix.provisioned_wcu.unwrap_or(dynaburst_engine::ON_DEMAND_INITIAL_WARM.1))))),
    }
}

/// The design of a table DescribeTable told of. Its read capacity is not
/// reported to the loader: a load does not read, so it is taken equal to
/// the write capacity.
fn design_of_table(name: &str, info: &TableInfo, warm: Option<u64>) -> TableDesign {
    let billing = match info.provisioned_wcu {
        Some(w) => BillingMode::Provisioned { read: w, write: w },
        None => BillingMode::PayPerRequest,
    };
    let mut index_attributes = Vec::new();
    for ix in &info.indexes {
        index_attributes.extend(ix.hash.iter().chain(&ix.range).cloned());
    }
    TableDesign {
        name: name.to_string(),
        hash: info.schema.hash.clone(),
        range: info.schema.range.clone(),
        billing,
        warm: warm.or(info.warm_write_units).map(|w| (None, Some(w))),
        on_demand_max: info
            .max_write_request_units
            .filter(|_| info.provisioned_wcu.is_none())
            .map(|w| (None, Some(w as i64))),
        global_indexes: info.indexes.iter().filter(|i| i.global).map(index_spec).collect(),
        local_indexes: info.indexes.iter().filter(|i| !i.global).map(index_spec).collect(),
        index_attributes,
    }
}

/// Runs the simulation and writes what it found.
pub async fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    let client = dynaburst_dynamo::client(&args.endpoint).await;
    let (design, from) = match dynaburst_dynamo::describe(&client, &args.table).await {
        Ok(info) => {
            if let Some(k) = &args.key {
                if *k != info.schema {
                    usage!(
                        "table {} exists with key {}, not the --key given ({k}): drop --key to simulate the table as it is",
                        args.table,
                        info.schema
                    );
                }
            }
            (design_of_table(&args.table, &info, args.warm_write_units), "the table's DescribeTable")
        }
        Err(e) => match &args.key {
            Some(k) => {
                let billing = match args.billing {
                    Billing::OnDemand => BillingMode::PayPerRequest,
                    Billing::Provisioned { read, write } => BillingMode::Provisioned { read, write },
                };
                let design = TableDesign {
                    name: args.table.clone(),
                    hash: k.hash.clone(),
                    range: k.range.clone(),
                    billing,
                    warm: args.warm_write_units.map(|w| (None, Some(w))),
                    on_demand_max: None,
                    global_indexes: Vec::new(),
                    local_indexes: Vec::new(),
                    index_attributes: Vec::new(),
                };
                let _ = e;
                (design, "--key and --billing (the table is not there to describe)")
            }
            None => {
                let why = e.explain(&args.endpoint.name());
                usage!("--simulate needs the table's design: {why}; or pass --key NAME:TYPE[,NAME:TYPE] (and --billing) for a table not yet created")
            }
        },
    };
    let opts = SimOptions {
        input: args.input,
        design,
        tuning: args.tuning,
        round_trip: Duration::from_millis(args.round_trip_ms),
        table_age: dynaburst_simulate::DEFAULT_TABLE_AGE,
        rejects: args.rejects,
        prices: args.prices,
    };
    let assumptions = vec![format!("the table's design came from {from}")];
    // The simulation runs its own (virtual-time) runtime on this thread's
    // side: keep it off the async runtime's worker.
    let sim = tokio::task::spawn_blocking(move || {
        let engine = dynaburst_simulate::engine_with(&opts.design)?;
        dynaburst_simulate::simulate_on(engine, opts, assumptions)
    })
    .await
    .context("the simulation stopped")??;
    let r = &sim.report;
    if let Some(path) = &args.timeline {
        std::fs::write(path, dynaburst_simulate::seconds_csv(&sim.seconds))
            .with_context(|| format!("cannot write the timeline to {}", path.display()))?;
    }
    if let Some(path) = &args.chart {
        let points: Vec<dynaburst_bench::charts::SimulatedSecond> = sim
            .seconds
            .iter()
            .map(|s| (s.second as f64, s.consumed_units, s.throttled_units, s.write_ceiling))
            .collect();
        let title = format!("Simulated load into {} ({})", r.table, r.billing);
        let subtitle = format!(
            "predicted {:.0} s, {:.0} items/s, {:.0} WCU/s; {} throttle events (simulated)",
            r.predicted_duration_s, r.mean_items_per_s, r.mean_units_per_s, r.throttle_events
        );
        let svg = dynaburst_bench::charts::simulation_svg(&title, &subtitle, &points)?;
        std::fs::write(path, svg).with_context(|| format!("cannot write the chart to {}", path.display()))?;
    }
    let json = serde_json::to_string_pretty(r)?;
    if let Some(path) = &args.report {
        std::fs::write(path, json.clone() + "\n")
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    println!("{json}");
    eprintln!(
        "dynaburst load --simulate: {} records: predicted {:.1} s, {:.0} items/s, {:.0} WCU/s; {} throttle events, {} items re-sent; ${:.4} on-demand{} (simulated in {:.1} s)",
        r.load.records.read,
        r.predicted_duration_s,
        r.mean_items_per_s,
        r.mean_units_per_s,
        r.throttle_events,
        r.items_resent,
        r.cost.on_demand_usd,
        r.cost.provisioned_usd.map(|c| format!(", ${c:.4} provisioned")).unwrap_or_default(),
        r.simulation_wall_s
    );
    Ok(match sim.ending {
        Ending::Complete if r.load.records.rejected > 0 => ExitCode::from(crate::load_cmd::EXIT_REJECTED),
        Ending::Complete => ExitCode::SUCCESS,
        _ => ExitCode::from(crate::load_cmd::EXIT_INCOMPLETE),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynaburst_model::ScalarType;

    /// What DescribeTable told of the table's and its indexes' on-demand
    /// maxima and warm throughput reaches the simulated table (a GSI's
    /// only: an LSI has none).
    #[test]
    fn the_simulated_table_takes_the_limits_describe_table_told_of() {
        let index = |name: &str, global: bool| IndexInfo {
            name: name.into(),
            global,
            hash: vec![("g".into(), ScalarType::S)],
            range: Vec::new(),
            projected: Some(Vec::new()),
            provisioned_wcu: None,
            warm_write_units: Some(5_000),
            max_write_request_units: Some(300),
        };
        let info = TableInfo {
            schema: KeySchema { hash: ("pk".into(), ScalarType::S), range: None },
            provisioned_wcu: None,
            warm_write_units: Some(4_500),
            max_write_request_units: Some(1_000),
            indexes: vec![index("gsi", true), index("lsi", false)],
        };
        let design = design_of_table("t", &info, None);
        assert_eq!(design.on_demand_max, Some((None, Some(1_000))));
        assert_eq!(design.warm, Some((None, Some(4_500))));
        let gsi = &design.global_indexes[0];
        assert_eq!((gsi.on_demand, gsi.warm), (Some((None, Some(300))), Some((None, Some(5_000)))));
        let lsi = &design.local_indexes[0];
        assert_eq!((lsi.on_demand, lsi.warm), (None, None));
        // A provisioned table shows no maxima (DynamoDB keeps them for a
        // switch back): none are simulated.
        let mut provisioned = TableInfo { provisioned_wcu: Some(50), ..info };
        provisioned.indexes[0].provisioned_wcu = Some(9_000);
        let design = design_of_table("t", &provisioned, None);
        assert_eq!(design.on_demand_max, None);
        // A provisioned GSI has no maxima, and warm throughput at least its units.
        let gsi = &design.global_indexes[0];
        assert_eq!((gsi.on_demand, gsi.warm), (None, Some((None, Some(9_000)))));
    }
}
