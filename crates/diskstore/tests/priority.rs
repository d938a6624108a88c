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

/// The applier runs at APPLIER_NICE and nothing else does: Linux keeps a
/// nice value per thread, and the applier lowers its own, not the
/// process's (the request threads and the committer keep theirs).
#[cfg(target_os = "linux")]
#[test]
fn the_applier_alone_yields_the_cpu() {
    let dir = common::fresh_dir("dynaburst-applier-nice");
    let disk = DiskStorage::open(&dir, &DiskOptions::default()).expect("open");
    // The applier lowers its priority as it starts: wait until it has.
    let mut applier = Vec::new();
    for _ in 0..500 {
        applier = thread_nices("dynaburst-appli");
        if applier == [i64::from(dynaburst_diskstore::APPLIER_NICE)] {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(applier, [10]);
    assert_eq!(thread_nices("dynaburst-commi"), [0]);
    let own = std::fs::read_to_string("/proc/thread-self/stat").expect("own stat");
    let own = &own[own.rfind(')').expect("comm in stat") + 2..];
    assert_eq!(own.split(' ').nth(16), Some("0"), "the opening thread's nice changed");
    disk.close();
}
