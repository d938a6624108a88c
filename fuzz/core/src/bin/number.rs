//! AFL++ target: see `dynaburst_fuzz::run_number`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz::run_number(data));
}
