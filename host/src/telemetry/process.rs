//! Process metrics read from `/proc/self` at each scrape, under the names Prometheus client
//! libraries use (`process_resident_memory_bytes`, `process_cpu_seconds_total`,
//! `process_open_fds`, `process_max_fds`, `process_start_time_seconds`). Where `/proc` is not
//! there (not Linux), they are left out.

use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeMetric as _},
    metrics::{counter::ConstCounter, gauge::ConstGauge},
    registry::Unit,
};

/// The collector registered by [`super::metrics`].
#[derive(Debug)]
pub struct Process;

/// What `/proc/self` says now.
#[derive(Debug, Default, PartialEq)]
struct Sample {
    rss_bytes: Option<u64>,
    cpu_seconds: Option<f64>,
    start_time_seconds: Option<f64>,
    open_fds: Option<u64>,
    max_fds: Option<u64>,
}

/// Clock ticks per second and the page size.
fn sysconf() -> (f64, u64) {
    // SAFETY-free: rustix wraps sysconf; the values are fixed for the process.
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    let page = rustix::param::page_size() as u64;
    (ticks, page)
}

/// Fields 14, 15 (utime, stime, in ticks), 22 (starttime, ticks after boot) and 24 (rss, in
/// pages) of `/proc/self/stat`, counted after the command name's closing parenthesis.
fn parse_stat(stat: &str) -> Option<(u64, u64, u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state).
    let at = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some((at(14)?, at(15)?, at(22)?, at(24)?))
}

/// `btime` of `/proc/stat`: the boot time, in Unix seconds.
fn boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// `Max open files` (the soft limit) of `/proc/self/limits`.
fn max_fds(limits: &str) -> Option<u64> {
    limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse().ok())
}

fn sample() -> Sample {
    let (ticks, page) = sysconf();
    let mut s = Sample::default();
    if let Some((utime, stime, start, rss)) = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .as_deref()
        .and_then(parse_stat)
    {
        s.cpu_seconds = Some((utime + stime) as f64 / ticks);
        s.rss_bytes = Some(rss * page);
        if let Some(boot) = std::fs::read_to_string("/proc/stat")
            .ok()
            .as_deref()
            .and_then(boot_time)
        {
            s.start_time_seconds = Some(boot as f64 + start as f64 / ticks);
        }
    }
    s.open_fds = std::fs::read_dir("/proc/self/fd")
        .ok()
        .map(|d| d.count() as u64);
    s.max_fds = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .as_deref()
        .and_then(max_fds);
    s
}

impl Collector for Process {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = sample();
        if let Some(v) = s.cpu_seconds {
            let c = ConstCounter::new(v);
            c.encode(encoder.encode_descriptor(
                "process_cpu",
                "User and system CPU time spent, in seconds",
                Some(&Unit::Seconds),
                c.metric_type(),
            )?)?;
        }
        let gauges = [
            (
                "process_resident_memory",
                "Resident memory size",
                Some(Unit::Bytes),
                s.rss_bytes.map(|v| v as f64),
            ),
            (
                "process_open_fds",
                "Open file descriptors",
                None,
                s.open_fds.map(|v| v as f64),
            ),
            (
                "process_max_fds",
                "Most open file descriptors allowed (soft limit)",
                None,
                s.max_fds.map(|v| v as f64),
            ),
            (
                "process_start_time",
                "Start time of the process since the Unix epoch",
                Some(Unit::Seconds),
                s.start_time_seconds,
            ),
        ];
        for (name, help, unit, value) in gauges {
            if let Some(v) = value {
                let g = ConstGauge::new(v);
                g.encode(encoder.encode_descriptor(name, help, unit.as_ref(), g.metric_type())?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        // A command name with spaces and a parenthesis cannot shift the fields.
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 1000 123456 300 18446744073709551615";
        assert_eq!(parse_stat(stat), Some((250, 50, 1000, 300)));
        assert_eq!(
            boot_time("cpu 1 2\nbtime 1700000000\n"),
            Some(1_700_000_000)
        );
        let limits = "Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n";
        assert_eq!(max_fds(limits), Some(1024));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_is_sampled() {
        let s = sample();
        assert!(s.rss_bytes.unwrap() > 1 << 20);
        assert!(s.open_fds.unwrap() >= 3);
        assert!(s.start_time_seconds.unwrap() > 1.6e9);
    }
}
