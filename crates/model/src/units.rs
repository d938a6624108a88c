//! Capacity-unit accounting (reference B4–B11).

/// Bytes per write unit.
pub const WRITE_UNIT_BYTES: usize = 1024;
/// Bytes per read unit (strongly consistent).
pub const READ_UNIT_BYTES: usize = 4096;
/// Largest item DynamoDB stores: 400 KB including attribute names.
pub const MAX_ITEM_BYTES: usize = 400 * 1024;

/// Read consistency, which halves or doubles read units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadKind {
    /// Eventually consistent: half a unit per 4 KB.
    Eventual,
    /// Strongly consistent: one unit per 4 KB.
    Strong,
    /// Transactional: two units per 4 KB.
    Transactional,
}

/// Write units for one item write of `bytes` (at least 1).
pub fn write_units(bytes: usize) -> f64 {
    bytes.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// Write units for one transactional item write: double.
pub fn transactional_write_units(bytes: usize) -> f64 {
    2.0 * write_units(bytes)
}

/// Read units for reading `bytes` (one item, or the sum for Query/Scan,
/// rounded once). Reading nothing still costs the minimum of one 4 KB block.
pub fn read_units(bytes: usize, kind: ReadKind) -> f64 {
    let blocks = bytes.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    match kind {
        ReadKind::Eventual => blocks / 2.0,
        ReadKind::Strong => blocks,
        ReadKind::Transactional => blocks * 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_write_examples() {
        // 500 B -> 1, 1.6 KB -> 2, transactional 2 KB -> 4 (B5).
        assert_eq!(write_units(500), 1.0);
        assert_eq!(write_units(1638), 2.0);
        assert_eq!(transactional_write_units(2048), 4.0);
        assert_eq!(write_units(0), 1.0);
        assert_eq!(write_units(1024), 1.0);
        assert_eq!(write_units(1025), 2.0);
        // BatchWrite of 500 B + 3.5 KB = 1 + 4 = 5 (B7).
        assert_eq!(write_units(500) + write_units(3584), 5.0);
    }

    #[test]
    fn documented_read_examples() {
        // 8 KB: 2 strong, 1 eventual, 4 transactional (B4).
        assert_eq!(read_units(8192, ReadKind::Strong), 2.0);
        assert_eq!(read_units(8192, ReadKind::Eventual), 1.0);
        assert_eq!(read_units(8192, ReadKind::Transactional), 4.0);
        // 3.5 KB rounds to 4 KB, 10 KB to 12 KB.
        assert_eq!(read_units(3584, ReadKind::Strong), 1.0);
        assert_eq!(read_units(10240, ReadKind::Strong), 3.0);
        // A missing item still costs 1 (strong) or 0.5 (eventual).
        assert_eq!(read_units(0, ReadKind::Strong), 1.0);
        assert_eq!(read_units(0, ReadKind::Eventual), 0.5);
        // Query: 10 items totalling 40.8 KB count as 44 KB -> 11 strong.
        assert_eq!(read_units(41779, ReadKind::Strong), 11.0);
        // 1,500 items of 64 B = 96,000 B -> 94 KB blocks... rounded once: 24 strong.
        assert_eq!(read_units(1500 * 64, ReadKind::Strong), 24.0);
        // Eventually consistent 80 KB -> 10 units.
        assert_eq!(read_units(80 * 1024, ReadKind::Eventual), 10.0);
    }
}
