//! The machine's memory as a memory budget (`--memory`) reads it, and byte
//! counts as a person reads them.

/// A mebibyte, in the f64 budgets are reckoned in.
pub const MIB: f64 = 1024.0 * 1024.0;

/// The share of `MemTotal` a memory budget takes without `--memory`.
pub const DEFAULT_FRACTION: f64 = 0.5;

/// The budget without `--memory` where /proc/meminfo cannot be read.
const FALLBACK_BUDGET: f64 = 2048.0 * MIB;

/// `--memory`'s value in bytes, or without it [`DEFAULT_FRACTION`] of the
/// machine's `MemTotal` (2 GiB where /proc/meminfo cannot be read): the one
/// default the bake and the export share.
pub fn budget_or_default(memory: Option<u64>) -> f64 {
    match memory {
        Some(bytes) => bytes as f64,
        None => meminfo("MemTotal").map_or(FALLBACK_BUDGET, |total| total * DEFAULT_FRACTION),
    }
}

/// A field of /proc/meminfo (`MemTotal`, `MemAvailable`), in bytes.
pub fn meminfo(field: &str) -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, field)
}

/// This process's peak resident memory so far (`VmHWM` in
/// /proc/self/status), in bytes; `None` where the kernel does not say.
pub fn peak_resident_bytes() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&text, "VmHWM")
}

/// `FIELD:   1234 kB` in /proc's text, in bytes.
fn kib_field(text: &str, field: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.strip_prefix(field).is_some_and(|rest| rest.starts_with(':')))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// `n` bytes rounded up to whole MiB, as `--memory` takes them: "200M".
pub fn whole_mib(n: f64) -> String {
    format!("{}M", (n / MIB).ceil())
}

/// A byte count for people: 3.2 GiB.
pub fn human_bytes(n: f64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = n;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{value:.0} {}", units[0]) } else { format!("{value:.1} {}", units[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_fields_read_in_bytes_and_counts_print_for_people() {
        let status = "Name:\tplanet\nVmPeak:\t  2048 kB\nVmHWM:\t   512 kB\n";
        assert_eq!(kib_field(status, "VmHWM"), Some(524_288.0));
        assert_eq!(kib_field(status, "VmHW"), None);
        assert_eq!(human_bytes(1000.0), "1000 bytes");
        assert_eq!(human_bytes(3.25 * MIB), "3.2 MiB");
        assert_eq!(whole_mib(100.5 * MIB), "101M");
    }
}
