//! Issue 3's capacity scenarios 6-9, driven directly against the model in
//! virtual time (10 ms steps): minutes of modelled load in milliseconds.

use dynaburst_capacity::*;
use dynaburst_model::Millis;
use dynaburst_rng::Rng;

const STEP_MS: u64 = 10;

/// A key hash inside the first quarter of the key space (partition 0 of a
/// table with four equal partitions).
fn first_quarter(i: u64, of: u64) -> u128 {
    (u128::MAX / 4 / u128::from(of)) * u128::from(i) + 1
}

/// Offers `units_per_step` units every step, over the given keys (picked
/// in a pseudo-random order unless `in_order`), from `from` for `ms`.
/// Returns admitted units per whole second and the first throttle time.
fn offer(
    model: &mut TableCapacity,
    keys: &[u128],
    units_per_step: f64,
    chunk: f64,
    from: u64,
    ms: u64,
    in_order: bool,
) -> (Vec<f64>, Option<u64>) {
    let mut per_second = vec![0.0; (ms / 1000) as usize + 1];
    let mut first_throttle = None;
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let mut cursor = 0usize;
    let mut t = from;
    while t < from + ms {
        let mut left = units_per_step;
        while left > 1e-9 {
            let units = left.min(chunk);
            let key = if in_order {
                cursor = (cursor + 1) % keys.len();
                keys[cursor]
            } else {
                keys[rng.below(keys.len() as u64) as usize]
            };
            match model.admit(Op::Write, key, units, Millis(t)) {
                Ok(()) => per_second[((t - from) / 1000) as usize] += units,
                Err(_) => {
                    first_throttle.get_or_insert(t);
                }
            }
            left -= units;
        }
        t += STEP_MS;
    }
    (per_second, first_throttle)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn burst_a_provisioned_table_idle_for_300_s_absorbs_30000_extra_units() {
    let mut model =
        TableCapacity::new(Mode::Provisioned { read: 100.0, write: 100.0 }, CapacitySettings::dynamodb(), Millis(0));
    // Idle for 300 s, then 1,000 units/s (the partition maximum) offered.
    let start = 300_000;
    let (per_second, first) = offer(&mut model, &[42], 10.0, 10.0, start, 120_000, true);
    let first = first.expect("it throttles once the burst is spent");
    let seconds = (first - start) as f64 / 1000.0;
    let admitted: f64 = per_second.iter().sum::<f64>();
    let admitted_before: f64 = per_second[..((first - start) / 1000) as usize].iter().sum();
    let extra = admitted_before + per_second[((first - start) / 1000) as usize] - 100.0 * seconds;
    println!("burst: throttled after {seconds:.2} s, {extra:.0} units above the 100/s provisioned rate");
    assert!((29_000.0..=31_000.0).contains(&extra), "extra {extra}");
    // After the burst, the table runs at its provisioned rate.
    let tail = mean(&per_second[60..119]);
    assert!((95.0..=105.0).contains(&tail), "steady rate {tail}, total {admitted}");
}

fn adaptive_workload(adaptive: bool) -> (Option<u64>, f64, usize) {
    let mut settings = CapacitySettings::dynamodb();
    settings.adaptive_capacity = adaptive;
    // Created at 3,900 WCU (ceil(30/3000 + 3900/1000) = 4 partitions),
    // lowered to 400: partitions are never merged, so each now holds a
    // 100 WCU share.
    let mut model = TableCapacity::new(Mode::Provisioned { read: 30.0, write: 3900.0 }, settings, Millis(0));
    model.set_mode(Mode::Provisioned { read: 30.0, write: 400.0 }, Millis(0));
    let keys: Vec<u128> = (0..50).map(|i| first_quarter(i, 50)).collect();
    // 150 units/s on partition 0 for 30 modelled minutes.
    let (per_second, first) = offer(&mut model, &keys, 1.5, 1.5, 1_000, 1_800_000, false);
    (first, mean(&per_second[600..1800]), model.partition_count())
}

#[test]
fn adaptive_capacity_lets_a_hot_partition_take_150_of_a_100_unit_share() {
    let (first, rate, partitions) = adaptive_workload(true);
    println!("adaptive on: first throttle {first:?}, {rate:.1} units/s on the hot partition");
    assert_eq!(partitions, 4);
    assert_eq!(first, None, "never throttled");
    assert!((149.0..=151.0).contains(&rate), "rate {rate}");
    // Without adaptive capacity the same load throttles once the burst
    // bank is spent, and settles at the partition's share.
    let (first, rate, _) = adaptive_workload(false);
    println!("adaptive off: first throttle at {first:?} ms, then {rate:.1} units/s");
    assert!(first.is_some_and(|t| t < 1_800_000), "throttled: {first:?}");
    assert!((95.0..=105.0).contains(&rate), "rate {rate}");
}

fn heat_settings() -> CapacitySettings {
    let mut s = CapacitySettings::dynamodb();
    s.heat_seconds = 60;
    s
}

#[test]
fn split_for_heat_splits_a_hot_partition_with_many_keys_and_throughput_rises() {
    let mut model = TableCapacity::new(Mode::OnDemand, heat_settings(), Millis(0));
    let keys: Vec<u128> = (0..1000).map(|i| first_quarter(i, 1000)).collect();
    // 3,000 units/s offered, all on partition 0's key range, for 5 minutes.
    let (per_second, _) = offer(&mut model, &keys, 30.0, 1.0, 1_000, 300_000, false);
    let early = mean(&per_second[5..55]);
    let late = mean(&per_second[240..299]);
    let splits: Vec<_> = model.metrics().splits.iter().filter(|e| e.reason == SplitReason::Heat).collect();
    println!(
        "heat: {early:.0} units/s before, {late:.0} after, {} heat splits, {} partitions",
        splits.len(),
        model.partition_count()
    );
    assert!((950.0..=1050.0).contains(&early), "early {early}");
    assert!(!splits.is_empty(), "the hot partition split");
    assert!(splits[0].at.0 >= 61_000, "not before the configured 60 s: {:?}", splits[0].at);
    assert!(late >= 1.5 * early, "late {late} vs early {early}");
}

#[test]
fn split_for_heat_does_not_split_one_hot_key_or_keys_written_in_increasing_order() {
    let mut model = TableCapacity::new(Mode::OnDemand, heat_settings(), Millis(0));
    let (per_second, _) = offer(&mut model, &[first_quarter(7, 1000)], 30.0, 1.0, 1_000, 300_000, false);
    assert!(model.metrics().splits.is_empty(), "one key: {:?}", model.metrics().splits);
    assert_eq!(model.partition_count(), 4);
    let rate = mean(&per_second[240..299]);
    assert!((950.0..=1050.0).contains(&rate), "one key stays at the partition maximum: {rate}");

    let mut model = TableCapacity::new(Mode::OnDemand, heat_settings(), Millis(0));
    let keys: Vec<u128> = (0..100_000).map(|i| first_quarter(i, 100_000)).collect();
    let (_, _) = offer(&mut model, &keys, 30.0, 1.0, 1_000, 300_000, true);
    assert!(model.metrics().splits.is_empty(), "increasing keys: {:?}", model.metrics().splits);
}

#[test]
fn on_demand_traffic_held_at_6000_becomes_the_peak_then_12000_is_admitted() {
    let mut model = TableCapacity::new(Mode::OnDemand, CapacitySettings::dynamodb(), Millis(0));
    assert_eq!(model.warm_throughput(), (12_000.0, 4_000.0));
    let keys: Vec<u128> = (0..10_000u64).map(|i| (u128::MAX / 10_000) * u128::from(i) + 7).collect();
    // 6,000 units/s offered for 12 minutes: at first 4,000 are admitted;
    // sustained for 5 minutes, that becomes the peak (ceiling 8,000), then
    // 6,000 is admitted and, sustained, becomes the new peak.
    let (per_second, _) = offer(&mut model, &keys, 60.0, 4.0, 1_000, 720_000, false);
    let first_minute = mean(&per_second[10..60]);
    let last_minute = mean(&per_second[660..719]);
    println!(
        "on-demand: {first_minute:.0} units/s at first, {last_minute:.0} later, warm {:?}, {} partitions",
        model.warm_throughput(),
        model.partition_count()
    );
    assert!((3_900.0..=4_100.0).contains(&first_minute), "first {first_minute}");
    assert!((5_900.0..=6_100.0).contains(&last_minute), "held {last_minute}");
    assert_eq!(model.warm_throughput().1, 12_000.0);
    // Now 12,000 units/s is admitted.
    let (per_second, first) = offer(&mut model, &keys, 120.0, 4.0, 721_000, 60_000, false);
    let rate = mean(&per_second[1..59]);
    println!("then {rate:.0} units/s of 12,000 offered, first throttle {first:?}");
    assert!(rate >= 11_400.0, "rate {rate}");
}

#[test]
fn spare_capacity_goes_to_background_work_only_after_requests_took_theirs() {
    // A 100 WCU table, idle: background work gets what its budget asks,
    // within what the buckets hold.
    let settings = CapacitySettings::dynamodb();
    let mut model = TableCapacity::new(Mode::Provisioned { read: 100.0, write: 100.0 }, settings, Millis(0));
    let first = model.take_spare(Op::Write, 100.0, Millis(1000));
    assert!((first - 100.0).abs() < 1e-6, "an idle second's 100 units are spare: {first}");
    // Requests that ask for more than the table has leave less than one
    // request's worth (5 units) spare, and the background work never
    // drives the buckets into debt.
    let keys: Vec<u128> = (0..100).map(|i| first_quarter(i, 100)).collect();
    let (admitted, throttled) = offer(&mut model, &keys, 5.0, 5.0, 1000, 1000, true);
    assert!(throttled.is_some());
    let second = model.take_spare(Op::Write, 100.0, Millis(1990));
    assert!((0.0..5.0).contains(&second), "spare after saturating requests: {second}");
    // The units taken count as consumed.
    let total = model.metrics().total_write_units;
    assert!((total - (first + admitted.iter().sum::<f64>() + second)).abs() < 1e-6);
}

#[test]
fn throttling_events_name_the_reason_and_partition_and_stay_bounded() {
    let mut model = TableCapacity::new(Mode::OnDemand, CapacitySettings::dynamodb(), Millis(0));
    let hot = first_quarter(1, 2);
    // One key, 2,000 units a second for 80 s: its partition refuses.
    let (_, first) = offer(&mut model, &[hot], 20.0, 1.0, 0, 80_000, true);
    assert!(first.is_some());
    let events = &model.metrics().throttles;
    assert_eq!(events.len(), MAX_THROTTLE_EVENTS);
    for e in events {
        assert_eq!(e.reason, "TableWriteKeyRangeThroughputExceeded");
        assert_eq!(e.partition_start, 0);
        assert!(e.items >= 1);
    }
    // One event per second: refusals within a second are counted together.
    let seconds: Vec<u64> = events.iter().map(|e| e.at.0 / 1000).collect();
    let mut distinct = seconds.clone();
    distinct.dedup();
    assert_eq!(distinct, seconds);
    assert_eq!(events.back().map(|e| e.at.0 / 1000), Some(79));
    let total: u64 = events.iter().map(|e| e.items).sum();
    assert!(total > 500 * MAX_THROTTLE_EVENTS as u64, "{total}");
}
