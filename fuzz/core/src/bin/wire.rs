//! AFL++ target: see `dynaburst_fuzz::run_wire`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz::run_wire(data));
}
