//! Every path of the file layout, in both directions: where each file and
//! folder of a state dir is, and what a name found there says (the day of
//! an archive or a daily summary, the week of a weekly one, the time of an
//! export, the key of an index entry); and the validation of the names
//! that become path components. Other modules ask [`Layout`], or join
//! names they listed from disk; three build names of their own, inside a
//! folder [`Layout`] gives: the failure log and its lock
//! (`memory::failures`: `logs/claude-session.jsonl`,
//! `.locks/failure-log.lock`), a recall segment's file
//! (`memory::retrieval::index`: `<first>_<last>.seg`) and the temporary
//! name of an atomic rewrite (`store::atomic`: `.<name>.….tmp`).
//!
//! The tree under `<state-dir>/sessions/` is the TypeScript seed's, kept
//! exactly so a state dir moves between the two unchanged. What this tool
//! adds lives in folders the seed never looks at (`.locks/`, `.tmp` names).
//!
//! One file per concern: `names` (the names that become path components),
//! one per area of the tree (`stm`, `ltm`, `summaries`, `archive`, `costs`,
//! `locks`, and `added` for the folders this tool adds), and `owner_files`,
//! the registry of every file and folder that belongs to one owner.

mod added;
mod archive;
mod costs;
mod locks;
mod ltm;
mod names;
pub mod owner_files;
mod stm;
mod summaries;

use std::path::{Path, PathBuf};

pub use names::{
    CONVERSATION_MARK, ChannelName, ConversationKey, MAX_NAME_LEN, MemoryKey, MemoryOf, TopicSlug,
    UserId,
};

/// How a day is written in file names (`messages-2026-03-23.jsonl.gz`,
/// `daily/2026-03-23.md`).
const DAY_FORMAT: &str = "%Y-%m-%d";

/// How a rotated broker log's modification time is written in its name.
const ROTATED_LOG_TIME_FORMAT: &str = "%Y%m%dT%H%M%SZ";

/// How an in-chat export's time is written in its name.
const CHAT_EXPORT_TIME_FORMAT: &str = "%Y%m%dT%H%M%S%.3fZ";

/// Where the seed's index paths start from: `sessions/`, so an entry's
/// path on disk is `ltm/users/U1.md`; in memory it is `users/U1.md`.
pub const INDEX_PATH_PREFIX: &str = "ltm/";

/// The paths of one state dir.
#[derive(Debug, Clone)]
pub struct Layout {
    state_dir: PathBuf,
    sessions: PathBuf,
}

impl Layout {
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        let state_dir = state_dir.into();
        let sessions = state_dir.join("sessions");
        Self {
            state_dir,
            sessions,
        }
    }

    /// The seed's default place for a channel: `./.claude/channels/NAME`.
    pub fn channel_state_dir(channel: &ChannelName) -> PathBuf {
        Path::new(".claude").join("channels").join(channel.as_str())
    }

    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    pub fn config_file(&self) -> PathBuf {
        self.sessions.join("config.json")
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, NaiveDate, Utc};

    use super::*;

    /// Every path the seed's library writes, where its README
    /// (`seed-memory.md`, "Storage Layout") puts it, seed folder names too.
    #[test]
    fn every_seed_path_is_where_the_seed_puts_it() {
        let layout = Layout::new(Layout::channel_state_dir(
            &ChannelName::new("slack").unwrap(),
        ));
        let s = ".claude/channels/slack/sessions";
        let u = UserId::seed_folder("Kevin Lee").unwrap();
        let t = TopicSlug::new("toeic").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        let cases: Vec<(PathBuf, String)> = vec![
            (
                layout.state_dir().to_owned(),
                ".claude/channels/slack".into(),
            ),
            (layout.sessions_dir().to_owned(), s.into()),
            (layout.config_file(), format!("{s}/config.json")),
            (layout.stm_root(), format!("{s}/stm")),
            (
                layout.stm_dir(&MemoryKey::person(&u)),
                format!("{s}/stm/Kevin Lee"),
            ),
            (
                layout.messages_file(&MemoryKey::person(&u)),
                format!("{s}/stm/Kevin Lee/messages.jsonl"),
            ),
            (
                layout.summary_file(&MemoryKey::person(&u)),
                format!("{s}/stm/Kevin Lee/summary.md"),
            ),
            (layout.ltm_dir(), format!("{s}/ltm")),
            (layout.profiles_dir(), format!("{s}/ltm/users")),
            (
                layout.profile_file(&u),
                format!("{s}/ltm/users/Kevin Lee.md"),
            ),
            (layout.topics_dir(), format!("{s}/ltm/topics")),
            (layout.topic_file(&t), format!("{s}/ltm/topics/toeic.md")),
            (layout.index_file(), format!("{s}/ltm/index.json")),
            (layout.summaries_root(), format!("{s}/summaries")),
            (
                layout.summaries_dir(&MemoryKey::person(&u)),
                format!("{s}/summaries/Kevin Lee"),
            ),
            (
                layout.daily_dir(&MemoryKey::person(&u)),
                format!("{s}/summaries/Kevin Lee/daily"),
            ),
            (
                layout.daily_file(&MemoryKey::person(&u), day),
                format!("{s}/summaries/Kevin Lee/daily/2026-03-23.md"),
            ),
            (
                layout.weekly_dir(&MemoryKey::person(&u)),
                format!("{s}/summaries/Kevin Lee/weekly"),
            ),
            (
                layout.weekly_file(&MemoryKey::person(&u), 2026, 3),
                format!("{s}/summaries/Kevin Lee/weekly/2026-W03.md"),
            ),
            (layout.archive_root(), format!("{s}/archive")),
            (
                layout.archive_dir(&MemoryKey::person(&u)),
                format!("{s}/archive/Kevin Lee"),
            ),
            (
                layout.archive_file(&MemoryKey::person(&u), day),
                format!("{s}/archive/Kevin Lee/messages-2026-03-23.jsonl.gz"),
            ),
            (
                layout.archived_summary_file(&MemoryKey::person(&u), day),
                format!("{s}/archive/Kevin Lee/summary-2026-03-23.md"),
            ),
            (
                Layout::markdown_file(&layout.profiles_dir(), "U1"),
                format!("{s}/ltm/users/U1.md"),
            ),
        ];
        for (path, want) in cases {
            assert_eq!(path, Path::new(&want));
        }
        // Index entries: `path` relative to `sessions/` on disk.
        for (key, file) in [
            (Layout::profile_index_key(&u), layout.profile_file(&u)),
            (Layout::topic_index_key(&t), layout.topic_file(&t)),
        ] {
            let on_disk = format!("{INDEX_PATH_PREFIX}{key}");
            assert_eq!(layout.sessions_dir().join(on_disk), file);
        }
    }

    /// What this tool adds: in folders the seed never looks at, or (broker
    /// logs) where the seed's own rotation puts them.
    #[test]
    fn every_path_of_our_own_is_outside_the_seed_areas() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let g = MemoryKey::conversation(&ConversationKey::new("G1").unwrap());
        let made = DateTime::parse_from_rfc3339("2026-03-23T03:28:32.123Z")
            .unwrap()
            .with_timezone(&Utc);
        let cases: Vec<(PathBuf, &str)> = vec![
            (layout.logs_dir(), "/s/logs"),
            (layout.archive_logs_dir(), "/s/sessions/archive/logs"),
            (
                layout.rotated_log_file("broker-slack.log", made, false),
                "/s/sessions/archive/logs/broker-slack-20260323T032832Z.log",
            ),
            (
                layout.rotated_log_file("broker-slack.log", made, true),
                "/s/sessions/archive/logs/broker-slack-20260323T032832Z.log.gz",
            ),
            (layout.exports_root(), "/s/sessions/exports"),
            (
                layout.exports_dir(&MemoryKey::person(&u)),
                "/s/sessions/exports/U1",
            ),
            (
                layout.chat_export_file(&MemoryKey::person(&u), made),
                "/s/sessions/exports/U1/export-20260323T032832.123Z.json",
            ),
            (
                layout.compaction_journal_file(&MemoryKey::person(&u)),
                "/s/sessions/.journal/U1.json",
            ),
            (layout.costs_dir(), "/s/sessions/costs"),
            (
                layout.maintenance_ledger_file(),
                "/s/sessions/costs/maintenance.jsonl",
            ),
            (layout.user_ledgers_dir(), "/s/sessions/costs/per-user"),
            (
                layout.user_ledger_file(&u),
                "/s/sessions/costs/per-user/U1/asks.jsonl",
            ),
            (
                layout.legacy_user_ledger_file(&u),
                "/s/sessions/costs/users/U1.jsonl",
            ),
            (
                layout.channel_ledger_file("2026-03"),
                "/s/sessions/costs/asks-2026-03.jsonl",
            ),
            (layout.memberships_root(), "/s/sessions/memberships"),
            (layout.memberships_dir(&u), "/s/sessions/memberships/U1"),
            (
                layout.membership_file(&u, &g),
                "/s/sessions/memberships/U1/#G1",
            ),
            (layout.temp_dir(), "/s/sessions/.tmp"),
            (layout.locks_dir(), "/s/sessions/.locks"),
            (
                layout.user_lock_file(&MemoryKey::person(&u)),
                "/s/sessions/.locks/users/U1.lock",
            ),
            (
                layout.compaction_lock_file(&MemoryKey::person(&u)),
                "/s/sessions/.locks/compact/U1.lock",
            ),
            (layout.index_lock_file(), "/s/sessions/.locks/index.lock"),
            (layout.ledger_lock_file(), "/s/sessions/.locks/ledger.lock"),
            (
                layout.maintain_lock_file(),
                "/s/sessions/.locks/maintain.lock",
            ),
            (layout.inflight_dir(), "/s/sessions/.locks/inflight"),
            (
                layout.inflight_lock_file(&g, "m1"),
                "/s/sessions/.locks/inflight/#G1-08a98b07b5509b6b.lock",
            ),
            (
                layout.inflight_failure_file(&g, "m1"),
                "/s/sessions/.locks/inflight/#G1-08a98b07b5509b6b.failed",
            ),
        ];
        let seed_areas = ["config.json", "stm", "ltm", "summaries", "archive"];
        for (path, want) in &cases {
            assert_eq!(path, Path::new(want));
            // Broker logs are where the seed keeps and rotates them.
            let Ok(inside) = path.strip_prefix(layout.sessions_dir()) else {
                continue;
            };
            if !inside.starts_with("archive/logs") {
                let area = inside.components().next().unwrap().as_os_str();
                assert!(!seed_areas.contains(&area.to_str().unwrap()), "{want}");
            }
        }
    }

    /// Each name parser undoes its path builder, and takes no other name.
    #[test]
    fn file_names_read_back_to_what_named_them() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        let name = |path: PathBuf| path.file_name().unwrap().to_str().unwrap().to_owned();
        assert_eq!(
            Layout::archive_day(&name(layout.archive_file(&MemoryKey::person(&u), day))),
            Some(day)
        );
        // A per-message lock's owner, an id with a `-` of its own too.
        for owner in ["U1", "U1-abcdef0123456789", "#G1"] {
            let key = MemoryKey::from_folder_name(owner).unwrap();
            for file in [
                layout.inflight_lock_file(&key, "m1"),
                layout.inflight_failure_file(&key, "m1"),
            ] {
                assert_eq!(Layout::inflight_owner(&name(file.clone())), Some(owner));
                assert_eq!(
                    Layout::inflight_lock_of(&file),
                    layout.inflight_lock_file(&key, "m1")
                );
            }
        }
        // A record's temporary file, left by a killed write.
        let temp = ".U1-x-08a98b07b5509b6b.failed.4242.18a3f.0.tmp";
        assert_eq!(Layout::inflight_owner(temp), Some("U1-x"));
        assert_eq!(
            Layout::inflight_lock_of(&layout.inflight_dir().join(temp)),
            layout.inflight_dir().join("U1-x-08a98b07b5509b6b.lock")
        );
        for other in [
            "U1.lock",
            "U1-08a98b07.lock",
            "U1-08a98b07b5509b6b.tmp",
            ".U1-08a98b07b5509b6b.lock.1.2.0.tmp",
        ] {
            assert_eq!(Layout::inflight_owner(other), None, "{other}");
        }
        let daily = name(layout.daily_file(&MemoryKey::person(&u), day));
        assert_eq!(
            Layout::markdown_stem(&daily).and_then(Layout::daily_day),
            Some(day)
        );
        let weekly = name(layout.weekly_file(&MemoryKey::person(&u), 2026, 3));
        assert_eq!(
            Layout::markdown_stem(&weekly).and_then(Layout::weekly_week),
            Some((2026, 3))
        );
        assert_eq!(
            Layout::markdown_stem(&name(layout.profile_file(&u))),
            Some("U1")
        );
        let made = DateTime::parse_from_rfc3339("2026-03-23T03:28:32.123Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            Layout::chat_export_time(&name(layout.chat_export_file(&MemoryKey::person(&u), made))),
            Some(made)
        );
        assert!(Layout::is_channel_ledger(&name(
            layout.channel_ledger_file("2026-03")
        )));
        assert!(Layout::is_broker_log("broker-slack.log"));
        assert_eq!(
            Layout::archived_summary_day(&name(
                layout.archived_summary_file(&MemoryKey::person(&u), day)
            )),
            Some(day)
        );
        assert_eq!(
            Layout::archived_summary_day("messages-2026-03-23.jsonl.gz"),
            None
        );
        // Only the name the layout gives: not another spelling of the day.
        for stray in ["summary-2026-3-23.md", "summary-+2026-03-23.md"] {
            assert_eq!(Layout::archived_summary_day(stray), None, "{stray}");
        }
        for other in [
            "summary-2026-03-23.md",
            "messages-2026-03-23.jsonl",
            "x.gz",
            "",
        ] {
            assert_eq!(Layout::archive_day(other), None, "{other}");
        }
        // Read without the format string, as the format reads it.
        for day in [
            "2026-03-23",
            "2024-02-29",
            "2023-02-29",
            "2026-02-30",
            "2026-13-01",
            "2026-00-10",
            "0000-01-01",
            "9999-12-31",
            "2026-3-23",
            "+2026-03-23",
            "2026-03-2x",
            "2026/03/23",
        ] {
            assert_eq!(
                Layout::archive_day(&format!("messages-{day}.jsonl.gz")),
                NaiveDate::parse_from_str(day, DAY_FORMAT).ok(),
                "{day}"
            );
        }
        for other in ["2026-W54", "2026-W00", "notes", "2026-13-01"] {
            assert_eq!(Layout::weekly_week(other), None, "{other}");
            assert_eq!(Layout::daily_day(other), None, "{other}");
        }
        assert_eq!(Layout::markdown_stem("U1.json"), None);
        assert_eq!(Layout::chat_export_time("export-yesterday.json"), None);
        assert!(!Layout::is_channel_ledger("maintenance.jsonl"));
        assert!(!Layout::is_broker_log(
            "broker-slack-20260323T032832Z.log.gz"
        ));
    }

    /// The seed's own files (tests/fixtures/seed-state) are found where
    /// the layout looks, and its index paths are the keys the layout makes.
    #[test]
    fn the_seed_fixture_is_where_the_layout_looks() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-state");
        let layout = Layout::new(&root);
        assert!(layout.config_file().is_file());
        assert!(layout.index_file().is_file());
        let mut folders: Vec<String> = std::fs::read_dir(layout.stm_root())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        folders.sort();
        assert_eq!(folders.len(), 6, "{folders:?}");
        for folder in &folders {
            let user = UserId::seed_folder(folder).unwrap();
            assert!(
                layout.messages_file(&MemoryKey::person(&user)).is_file(),
                "{folder}"
            );
        }
        let u = UserId::new("U0123ABC").unwrap();
        assert!(layout.summary_file(&MemoryKey::person(&u)).is_file());
        let kevin = UserId::seed_folder("Kevin Lee").unwrap();
        assert!(layout.profile_file(&kevin).is_file());
        let toeic = TopicSlug::new("toeic").unwrap();
        assert!(layout.topic_file(&toeic).is_file());
        let days: Vec<NaiveDate> = std::fs::read_dir(layout.daily_dir(&MemoryKey::person(&u)))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                Layout::markdown_stem(&name).and_then(Layout::daily_day)
            })
            .collect();
        assert_eq!(days, [NaiveDate::from_ymd_opt(2026, 3, 21).unwrap()]);
        assert!(layout.daily_file(&MemoryKey::person(&u), days[0]).is_file());
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(layout.index_file()).unwrap()).unwrap();
        for entry in index["entries"].as_array().unwrap() {
            let id = entry["id"].as_str().unwrap();
            let key = match entry["type"].as_str().unwrap() {
                "user" => Layout::profile_index_key(&UserId::seed_folder(id).unwrap()),
                _ => Layout::topic_index_key(&TopicSlug::new(id).unwrap()),
            };
            assert_eq!(entry["path"], format!("{INDEX_PATH_PREFIX}{key}"));
            assert!(
                layout
                    .sessions_dir()
                    .join(entry["path"].as_str().unwrap())
                    .is_file()
            );
        }
    }

    #[test]
    fn paths_follow_the_seed_layout() {
        let layout = Layout::new("/s");
        let u = UserId::new("U1").unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 23).unwrap();
        assert_eq!(
            layout.messages_file(&MemoryKey::person(&u)),
            Path::new("/s/sessions/stm/U1/messages.jsonl")
        );
        assert_eq!(
            layout.archive_file(&MemoryKey::person(&u), day),
            Path::new("/s/sessions/archive/U1/messages-2026-03-23.jsonl.gz")
        );
        assert_eq!(
            layout.weekly_file(&MemoryKey::person(&u), 2026, 3),
            Path::new("/s/sessions/summaries/U1/weekly/2026-W03.md")
        );
        assert_eq!(
            layout.profile_file(&u),
            Path::new("/s/sessions/ltm/users/U1.md")
        );
    }
}
