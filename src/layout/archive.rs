//! The archive under `archive/<owner>/` (rotated logs, archived rolling
//! summaries) and the broker logs: where they live, where a rotated one
//! goes, and the day or time their names say.

use std::path::PathBuf;

use chrono::{DateTime, NaiveDate, Utc};

use super::{DAY_FORMAT, Layout, MemoryKey, ROTATED_LOG_TIME_FORMAT};

impl Layout {
    pub fn archive_root(&self) -> PathBuf {
        self.sessions.join("archive")
    }

    pub fn archive_dir(&self, key: &MemoryKey) -> PathBuf {
        self.archive_root().join(key.as_str())
    }

    pub fn archive_file(&self, key: &MemoryKey, day: NaiveDate) -> PathBuf {
        self.archive_dir(key)
            .join(format!("messages-{}.jsonl.gz", day.format(DAY_FORMAT)))
    }

    /// The day of an archive, from its file name
    /// (`messages-2026-03-23.jsonl.gz`); `None` for any other file.
    pub fn archive_day(file_name: &str) -> Option<NaiveDate> {
        let day = file_name
            .strip_prefix("messages-")?
            .strip_suffix(".jsonl.gz")?;
        // The form this layout writes, read without a format string
        // (recall lists every archive of a memory on each ask); any
        // other form as the format reads it.
        match day.as_bytes() {
            [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1]
                if [y0, y1, y2, y3, m0, m1, d0, d1]
                    .iter()
                    .all(|b| b.is_ascii_digit()) =>
            {
                let n = |digits: &[&u8]| {
                    digits
                        .iter()
                        .fold(0u32, |v, &&b| v * 10 + u32::from(b - b'0'))
                };
                NaiveDate::from_ymd_opt(n(&[y0, y1, y2, y3]) as i32, n(&[m0, m1]), n(&[d0, d1]))
            }
            _ => NaiveDate::parse_from_str(day, DAY_FORMAT).ok(),
        }
    }

    pub fn archived_summary_file(&self, key: &MemoryKey, day: NaiveDate) -> PathBuf {
        self.archive_dir(key)
            .join(format!("summary-{}.md", day.format(DAY_FORMAT)))
    }

    /// The day an archived rolling summary was retired on, from its file
    /// name (`summary-2026-03-23.md`, the name
    /// [`Layout::archived_summary_file`] gives it); `None` for any other
    /// file, also one the day's parse alone would take
    /// (`summary-2026-3-23.md`: a second file of the same day).
    pub fn archived_summary_day(file_name: &str) -> Option<NaiveDate> {
        let stem = file_name
            .strip_prefix("summary-")
            .and_then(Layout::markdown_stem)?;
        Layout::daily_day(stem).filter(|day| day.format(DAY_FORMAT).to_string() == stem)
    }

    /// Rotated broker logs.
    pub fn archive_logs_dir(&self) -> PathBuf {
        self.archive_root().join("logs")
    }

    /// Where a broker log goes when rotated: its stem and its modification
    /// time (`broker-slack-20260323T032832Z.log`), gzipped (`.log.gz`) or
    /// not, in [`Layout::archive_logs_dir`].
    pub fn rotated_log_file(&self, log_name: &str, modified: DateTime<Utc>, gzip: bool) -> PathBuf {
        let stem = log_name.strip_suffix(".log").unwrap_or(log_name);
        let name = format!("{stem}-{}.log", modified.format(ROTATED_LOG_TIME_FORMAT));
        self.archive_logs_dir()
            .join(if gzip { format!("{name}.gz") } else { name })
    }

    /// Broker logs (`broker-*.log`) live beside `sessions/`, as in the seed.
    pub fn logs_dir(&self) -> PathBuf {
        self.state_dir.join("logs")
    }

    /// Whether a file name in [`Layout::logs_dir`] is a broker's log.
    pub fn is_broker_log(file_name: &str) -> bool {
        file_name.starts_with("broker-") && file_name.ends_with(".log")
    }
}
