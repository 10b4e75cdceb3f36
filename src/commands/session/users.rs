//! `session users` and `session conversations`: one row per person or per
//! group conversation, sorted and limited, with its spend cells.

use chrono::Utc;

use super::print_listing;
use crate::cli::UserSort;
use crate::commands::Output;
use crate::commands::style::{Fit, Style, human_bytes};
use crate::memory::ledger::Spend;
use crate::memory::people;
use crate::state::State;

pub(super) fn users(
    state: &State,
    sort: UserSort,
    limit: Option<usize>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    let mut all = people::people(state, Utc::now())?;
    match sort {
        UserSort::Activity => all.sort_by_key(|s| std::cmp::Reverse(s.last_activity)),
        UserSort::Messages => {
            all.sort_by_key(|s| std::cmp::Reverse(s.stm_messages + s.group_messages))
        }
        UserSort::Size => all.sort_by_key(|s| std::cmp::Reverse(s.bytes)),
    }
    if let Some(limit) = limit {
        all.truncate(limit);
    }
    let headers = [
        "USER",
        "NAME",
        "MESSAGES",
        "IN GROUPS",
        "COMPACTED",
        "LAST ACTIVITY",
        "SIZE",
        "PROFILE",
        "TODAY",
        "MONTH",
        "TOTAL",
    ];
    // On a narrow terminal: ids and names are cut, then the monthly and
    // daily spend, the group and compacted counts, the profile and size
    // columns are left out, in that order.
    let fit = Fit {
        cut: Some(&[0, 1]),
        drop: &[9, 8, 3, 4, 7, 6],
    };
    print_listing(&all, output, style, None, &headers, fit, |s| {
        vec![
            s.user.clone(),
            s.display_name.clone().unwrap_or_else(|| "-".into()),
            (s.stm_messages + s.group_messages).to_string(),
            s.group_messages.to_string(),
            s.compacted.to_string(),
            activity_cell(s.last_activity),
            human_bytes(s.bytes),
            if s.has_profile { "yes" } else { "no" }.into(),
        ]
        .into_iter()
        .chain(spend_cells(&s.spend))
        .collect()
    })
}

/// A table cell for the time of the last message.
fn activity_cell(last: Option<chrono::DateTime<Utc>>) -> String {
    last.map_or("-".into(), |t| t.format("%Y-%m-%d %H:%M").to_string())
}

/// The TODAY, MONTH and TOTAL cells of a spend.
fn spend_cells(spend: &Spend) -> [String; 3] {
    [spend.today_usd, spend.month_usd, spend.total_usd].map(|usd| format!("${usd:.4}"))
}

pub(super) fn conversations(
    state: &State,
    sort: UserSort,
    limit: Option<usize>,
    output: Output,
    style: Style,
) -> anyhow::Result<()> {
    let mut all = people::conversations(state, Utc::now())?;
    match sort {
        UserSort::Activity => all.sort_by_key(|s| std::cmp::Reverse(s.last_activity)),
        UserSort::Messages => all.sort_by_key(|s| std::cmp::Reverse(s.stm_messages)),
        UserSort::Size => all.sort_by_key(|s| std::cmp::Reverse(s.bytes)),
    }
    if let Some(limit) = limit {
        all.truncate(limit);
    }
    let headers = [
        "CONVERSATION",
        "STM",
        "COMPACTED",
        "PEOPLE",
        "LAST ACTIVITY",
        "SIZE",
        "TODAY",
        "MONTH",
        "TOTAL",
    ];
    let empty = Some("no group or thread conversations yet");
    let fit = Fit {
        cut: Some(&[0]),
        drop: &[7, 6, 2, 5],
    };
    print_listing(&all, output, style, empty, &headers, fit, |s| {
        vec![
            s.conversation.clone(),
            s.stm_messages.to_string(),
            s.compacted.to_string(),
            s.people.len().to_string(),
            activity_cell(s.last_activity),
            human_bytes(s.bytes),
        ]
        .into_iter()
        .chain(spend_cells(&s.spend))
        .collect()
    })
}
