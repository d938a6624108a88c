//! AFL++ target: see `dynaburst_fuzz_mongo::run_mongo`.

fn main() {
    afl::fuzz!(|data: &[u8]| dynaburst_fuzz_mongo::run_mongo(data));
}
