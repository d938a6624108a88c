//! AFL++ target: see `dynaburst_fuzz::run_input`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz::run_input(data));
}
