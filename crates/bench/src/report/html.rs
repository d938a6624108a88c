//! `report.html`: one self-contained file beside `report.md`, readable
//! offline. It embeds the web view's own script and style
//! (`dynaburst_server::web`) with the run's per-second figures, so the
//! partition-keys loads are drawn by the same chart code as the live page,
//! and the SVG charts `report.md` links to, inline.

use serde_json::{json, Value};

use crate::results::{PartitionLoad, Results};

/// One partition's write units per second (seed 004's loads are writes).
const PARTITION_WRITE_MAX: f64 = 1000.0;
/// And read units.
const PARTITION_READ_MAX: f64 = 3000.0;

/// The web view's document for one partition-keys load: its timeline as
/// write units and throttled write items per second.
fn load_doc(l: &PartitionLoad) -> Value {
    let seconds: Vec<Value> = l
        .timeline
        .iter()
        .map(|s| {
            json!({
                "second": s.second, "read_units": 0.0, "write_units": s.consumed,
                "throttled_requests": 0, "throttled_read_items": 0, "throttled_write_items": s.throttled,
                "partition_count": 0, "partitions": []
            })
        })
        .collect();
    json!({
        "table": format!("partition keys: {}", l.label),
        "mode": if l.case == "provisioned" { "provisioned" } else { "on-demand" },
        "provisioned": null,
        "partition_count": null,
        "warm_throughput": null,
        "partition_max": {"read": PARTITION_READ_MAX, "write": PARTITION_WRITE_MAX},
        "table_max": null,
        "on_demand_ceiling": null,
        "item_count": l.items,
        "size_bytes": null,
        "partitions": [],
        "totals": null,
        "splits": [],
        "throttles": [],
        "seconds": seconds,
        "seed_rate": l.seed_rate,
        "note": format!("{} ranges in {:.1} s, {:.0} WCU/s (the seed saw {:.0})", l.items, l.seconds, l.rate_units_per_s, l.seed_rate),
    })
}

/// Text safe inside HTML.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `report.html` for `results`, with `charts` (file name, SVG text) inline.
pub fn render_html(results: &Results, charts: &[(String, String)]) -> String {
    let loads: Vec<Value> = results
        .scenarios
        .partition_keys
        .as_ref()
        .map(|s| s.figures.loads.iter().map(load_doc).collect())
        .unwrap_or_default();
    // `</` would end the script element early.
    let data = json!({ "tables": loads }).to_string().replace("</", "<\\/");
    let mut out = String::new();
    out.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>dynaburst bench report</title>\n<style>\n");
    out.push_str(dynaburst_server::web::APP_CSS);
    // One chart per load: a laptop-width column, not the whole screen.
    out.push_str("\n.charts { grid-template-columns: minmax(420px, 760px); }\n");
    out.push_str(".svg-chart { background: #fff; border: 1px solid #d8dee6; border-radius: 6px; padding: 0.6em; }\n");
    out.push_str("</style>\n</head>\n<body>\n<header><h1>dynaburst <span class=\"sub\">bench report</span></h1>");
    out.push_str(&format!(
        "<p class=\"status\">{} · seed {} · {}</p></header>\n",
        escape(&results.command),
        results.seed,
        escape(&results.endpoint)
    ));
    out.push_str("<main id=\"tables\"><p class=\"empty\">No partition-keys scenario in this run.</p></main>\n");
    out.push_str("<main class=\"svg-charts\">\n");
    for (name, svg) in charts {
        out.push_str(&format!("<section class=\"svg-chart\"><h2>{}</h2>\n{svg}\n</section>\n", escape(name)));
    }
    out.push_str("</main>\n<footer>The figures are in results.json and report.md beside this file.</footer>\n");
    out.push_str("<script>window.DYNABURST_STATIC = true;</script>\n<script>\n");
    out.push_str(dynaburst_server::web::APP_JS);
    out.push_str("\n</script>\n<script>window.dynaburstRender(");
    out.push_str(&data);
    out.push_str(");</script>\n</body>\n</html>\n");
    out
}
