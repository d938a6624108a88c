//! Renders report.md and the SVG charts of a results.json again, into a
//! directory: `cargo run -p dynaburst-bench --example render -- RESULTS.json OUT_DIR`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(input), Some(out)) = (args.next(), args.next()) else {
        return Err("usage: render RESULTS.json OUT_DIR".into());
    };
    let results = dynaburst_bench::results::Results::from_json(&std::fs::read_to_string(&input)?)?;
    std::fs::create_dir_all(&out)?;
    for file in dynaburst_bench::run::render(&results, std::path::Path::new(&out))? {
        println!("{}", file.display());
    }
    Ok(())
}
