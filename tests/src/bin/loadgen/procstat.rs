//! CPU time and memory of a process and its descendants, read from `/proc`, so a target
//! that forks workers (gunicorn) is charged for all of them.

use std::time::Duration;

/// Linux reports `utime`/`stime` in USER_HZ ticks, which is 100 on every architecture it runs on.
const TICKS_PER_SECOND: f64 = 100.0;

/// `pid` and every process below it.
fn tree(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(fields) = stat_fields(child) {
                if let Some(ppid) = fields.get(1).and_then(|p| p.parse::<u32>().ok()) {
                    parents.push((child, ppid));
                }
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// The fields of `/proc/PID/stat` after the command name (field 3, `state`, is index 0).
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

/// What a process tree used so far.
#[derive(Clone, Copy, Default)]
pub struct Usage {
    /// User plus system CPU time.
    pub cpu: Duration,
    /// Minor page faults: pages the allocator handed back and touched again show here.
    pub faults: u64,
}

impl Usage {
    pub fn since(self, before: Usage) -> Usage {
        Usage {
            cpu: self.cpu.saturating_sub(before.cpu),
            faults: self.faults.saturating_sub(before.faults),
        }
    }
}

/// CPU time and minor faults used so far by `pid` and its descendants.
pub fn usage(pid: u32) -> Usage {
    let (ticks, faults) = tree(pid)
        .into_iter()
        .filter_map(stat_fields)
        .map(|f| {
            let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            // minflt is field 10, utime and stime fields 14 and 15: indexes 7, 11 and 12 here.
            (n(11) + n(12), n(7))
        })
        .fold((0, 0), |(t, f), (t2, f2)| (t + t2, f + f2));
    Usage {
        cpu: Duration::from_secs_f64(ticks as f64 / TICKS_PER_SECOND),
        faults,
    }
}

/// Memory of `pid` and its descendants, in bytes: the proportional set size, so pages that
/// forked workers share with their parent are counted once, not once per process.
pub fn memory(pid: u32) -> u64 {
    tree(pid)
        .into_iter()
        .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")).ok())
        .filter_map(|s| {
            let line = s.lines().find(|l| l.starts_with("Pss:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .sum()
}
