//! Tiered summaries under `summaries/<owner>/`: daily and weekly notes,
//! and the day or week their names say.

use std::path::PathBuf;

use chrono::NaiveDate;

use super::{DAY_FORMAT, Layout, MemoryKey};

impl Layout {
    pub fn summaries_root(&self) -> PathBuf {
        self.sessions.join("summaries")
    }

    pub fn summaries_dir(&self, key: &MemoryKey) -> PathBuf {
        self.summaries_root().join(key.as_str())
    }

    pub fn daily_dir(&self, key: &MemoryKey) -> PathBuf {
        self.summaries_dir(key).join("daily")
    }

    pub fn daily_file(&self, key: &MemoryKey, day: NaiveDate) -> PathBuf {
        Self::markdown_file(&self.daily_dir(key), &day.format(DAY_FORMAT).to_string())
    }

    /// The day of a daily summary, from its stem (`2026-03-23`).
    pub fn daily_day(stem: &str) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(stem, DAY_FORMAT).ok()
    }

    pub fn weekly_dir(&self, key: &MemoryKey) -> PathBuf {
        self.summaries_dir(key).join("weekly")
    }

    /// `YYYY-Www.md`, ISO week-numbering year and week.
    pub fn weekly_file(&self, key: &MemoryKey, iso_year: i32, week: u32) -> PathBuf {
        Self::markdown_file(&self.weekly_dir(key), &format!("{iso_year:04}-W{week:02}"))
    }

    /// The ISO year and week of a weekly summary, from its stem
    /// (`2026-W13`); `None` unless that week exists.
    pub fn weekly_week(stem: &str) -> Option<(i32, u32)> {
        let (year, week) = stem.split_once("-W")?;
        let (year, week) = (year.parse().ok()?, week.parse().ok()?);
        NaiveDate::from_isoywd_opt(year, week, chrono::Weekday::Mon)?;
        Some((year, week))
    }
}
