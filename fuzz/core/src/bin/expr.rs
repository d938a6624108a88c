//! AFL++ target: see `dynaburst_fuzz::run_expr`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz::run_expr(data));
}
