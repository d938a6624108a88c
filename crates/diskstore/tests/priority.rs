//! The applier's CPU priority. A test binary of its own: the only
//! storage of the process is this test's, so its threads are the only ones
//! with the applier's and the committer's names.

mod common;

use dynaburst_diskstore::{DiskOptions, DiskStorage};

/// The nice value of each of this process's threads named `name`
/// (`/proc/self/task/*/stat`: field 19, after the name in parentheses).
#[cfg(target_os = "linux")]
fn thread_nices(name: &str) -> Vec<i64> {
    let mut nices = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").expect("tasks") {
        let path = task.expect("task").path();
        let Ok(comm) = std::fs::read_to_string(path.join("comm")) else { continue };
        if comm.trim_end() != name {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).expect("stat");
        let after = &stat[stat.rfind(')').expect("comm in stat") + 2..];
        // Fields from the third (state) on: nice is the 19th field.
        nices.push(after.split(' ').nth(16).expect("nice").parse().expect("a number"));
    }
    nices
}

/// The nice value of the calling thread.
#[cfg(target_os = "linux")]
fn own_nice() -> i64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("own stat");
    let after = &stat[stat.rfind(')').expect("comm in stat") + 2..];
    after.split(' ').nth(16).expect("nice").parse().expect("a number")
}

/// The applier runs APPLIER_NICE above the process's nice value (at most
/// 19) and nothing else does: Linux keeps a nice value per thread, and the
/// applier lowers its own, not the process's (the opening thread, the
/// committer and fjall's workers keep theirs), whatever the process was
/// started at (`nice -n 5 cargo test` passes too).
#[cfg(target_os = "linux")]
#[test]
fn the_applier_alone_yields_the_cpu() {
    let base = own_nice();
    let lowered = (base + i64::from(dynaburst_diskstore::APPLIER_NICE)).min(19);
    let dir = common::fresh_dir("dynaburst-applier-nice");
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("open");
    // Each thread names itself, and the applier lowers its priority, as it
    // starts: wait until all have.
    let (mut applier, mut committer, mut workers) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..500 {
        (applier, committer, workers) =
            (thread_nices("dynaburst-appli"), thread_nices("dynaburst-commi"), thread_nices("fjall:worker"));
        if applier == [lowered] && !committer.is_empty() && !workers.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(applier, [lowered]);
    assert_eq!(committer, [base]);
    assert!(!workers.is_empty(), "fjall's worker threads were not found");
    assert!(workers.iter().all(|n| *n == base), "fjall's workers at {workers:?}, the process at {base}");
    assert_eq!(own_nice(), base, "the opening thread's nice changed");
    disk.close();
}
