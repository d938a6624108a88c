//! AFL++ target: see `dynaburst_fuzz::run_partiql`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz::run_partiql(data));
}
