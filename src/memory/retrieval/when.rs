//! Dates a query names ("on 3 June, 2023", "in May 2023", "2023-06-03",
//! "2023年6月3日", and a month with no year: "in June"): a message
//! written on that day (or in that month) is more likely what the query
//! is about, since a message's date is shown with it but is not among
//! its words. A day named raises the few days after it too: what
//! happened is told then ("yesterday", "last night").

use std::sync::LazyLock;

use chrono::{Datelike as _, NaiveDate};
use regex::Regex;

/// A span of days a query names, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first: NaiveDate,
    pub last: NaiveDate,
    /// One day (not a whole month).
    pub day: bool,
    /// The month of `first` in every year ("in June": the year is not
    /// guessed).
    pub yearly: bool,
}

/// The days after a day a query names on which what happened that day
/// is still told ("yesterday", "last night", "on Saturday").
pub const DAYS_AFTER: i64 = 3;

impl Span {
    /// Whether `date` is one of the [`DAYS_AFTER`] days after the day
    /// this span names (none for a month).
    pub fn is_told_after(&self, date: NaiveDate) -> bool {
        self.day && self.last < date && (date - self.last).num_days() <= DAYS_AFTER
    }

    pub fn contains(&self, date: NaiveDate) -> bool {
        if self.yearly {
            date.month() == self.first.month()
        } else {
            self.first <= date && date <= self.last
        }
    }
}

/// The months' names; their first three letters name them too.
const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

static MONTH_NAME: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";

/// "3 June, 2023", "3rd of June 2023"
static DAY_MONTH_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+{MONTH_NAME}\.?,?\s+(\d{{4}})\b"
    ))
    .expect("a valid pattern")
});
/// "June 3, 2023", "June 3rd 2023"
static MONTH_DAY_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b{MONTH_NAME}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"
    ))
    .expect("a valid pattern")
});
/// "June 2023", "June, 2023"
static MONTH_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"(?i)\b{MONTH_NAME}\.?,?\s+(\d{{4}})\b")).expect("a valid pattern")
});
/// "in June", "during Sept": a month name, capitalised (not "I may"),
/// after a word that says when ("May I ask" names no month).
static MONTH_ALONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:\b(?:in|on|during|of|last|since|until|through|early|late|mid|before|after|by))[\s-]+(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?)?(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b",
    )
    .expect("a valid pattern")
});
/// "2023-06-03", "2023/6/3", "2023年6月3日", "2023年6月"
static NUMERIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})(?:\s*(?:[-/.]|月)\s*(\d{1,2})\s*日?|\s*月)")
        .expect("a valid pattern")
});

/// A month's name or its abbreviation of three or more letters, in any
/// case: what [`MONTH_NAME`] matches.
fn is_month_word(word: &str) -> bool {
    let word = word.to_ascii_lowercase();
    word.len() >= 3 && MONTHS.iter().any(|full| full.starts_with(word.as_str()))
}

fn month_number(name: &str) -> Option<u32> {
    let name = name.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| name.starts_with(&m[..3]))
        .map(|i| i as u32 + 1)
}

fn day_span(year: i32, month: u32, day: u32) -> Option<Span> {
    let date = NaiveDate::from_ymd_opt(year, month, day)?;
    Some(Span {
        first: date,
        last: date,
        day: true,
        yearly: false,
    })
}

fn month_span(year: i32, month: u32) -> Option<Span> {
    let first = NaiveDate::from_ymd_opt(year, month, 1)?;
    let next = if month == 12 {
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?
    } else {
        NaiveDate::from_ymd_opt(year, month + 1, 1)?
    };
    Some(Span {
        first,
        last: next.pred_opt()?,
        day: false,
        yearly: false,
    })
}

/// The months `text` names with no year ("in June"), each in every
/// year. Only for a text with no year at all: "in June 2023" is
/// [`MONTH_YEAR`]'s.
fn yearly_months(text: &str) -> Vec<Span> {
    // Without a month's capitalised name as a word ("Mark" is none),
    // the pattern is not even compiled.
    let names_a_month = text
        .split(|c: char| !c.is_ascii_alphabetic())
        .any(|w| w.starts_with(|c: char| c.is_ascii_uppercase()) && is_month_word(w));
    if !names_a_month {
        return Vec::new();
    }
    let mut out: Vec<Span> = Vec::new();
    for c in MONTH_ALONE.captures_iter(text) {
        if let Some(span) = month_number(&c[1]).and_then(|m| month_span(2000, m)) {
            let span = Span {
                yearly: true,
                ..span
            };
            if out.len() < MAX_SPANS && !out.contains(&span) {
                out.push(span);
            }
        }
    }
    out
}

/// The most days and months one query names that count: a question names
/// one or two ("between August 11 and August 15"); every hit is checked
/// against each, so a message of thousands of dates must not cost
/// thousands of checks a hit.
pub const MAX_SPANS: usize = 8;

/// The days and months `text` names, at most [`MAX_SPANS`]. A day with
/// no year ("on 3 June") names its month in every year, as "in June"
/// does: the year is not guessed. (Full-width digits are not read: such
/// a date is simply not found.)
pub fn spans(text: &str) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    // Every form but a month alone names a year: without four digits in
    // a row there is no other to find, and their patterns are not even
    // compiled (a few ms per process).
    let has_year = text
        .as_bytes()
        .windows(4)
        .any(|w| w.iter().all(u8::is_ascii_digit));
    if !has_year {
        return yearly_months(text);
    }
    let mut push = |span: Option<Span>| {
        if let Some(span) = span
            && out.len() < MAX_SPANS
            && !out.contains(&span)
        {
            out.push(span);
        }
    };
    let num = |s: &str| s.parse::<u32>().ok();
    let mut days_found = false;
    for c in DAY_MONTH_YEAR.captures_iter(text) {
        if let (Some(d), Some(m), Ok(y)) = (num(&c[1]), month_number(&c[2]), c[3].parse()) {
            push(day_span(y, m, d));
            days_found = true;
        }
    }
    for c in MONTH_DAY_YEAR.captures_iter(text) {
        if let (Some(m), Some(d), Ok(y)) = (month_number(&c[1]), num(&c[2]), c[3].parse()) {
            push(day_span(y, m, d));
            days_found = true;
        }
    }
    if !days_found {
        for c in MONTH_YEAR.captures_iter(text) {
            if let (Some(m), Ok(y)) = (month_number(&c[1]), c[2].parse()) {
                push(month_span(y, m));
            }
        }
    }
    for c in NUMERIC.captures_iter(text) {
        let (Ok(y), Some(m)) = (c[1].parse::<i32>(), num(&c[2])) else {
            continue;
        };
        match c.get(3).and_then(|d| num(d.as_str())) {
            Some(d) => push(day_span(y, m, d)),
            None => push(month_span(y, m)),
        }
    }
    out
}

/// The day of a timestamp, for [`Span::contains`].
pub fn day_of(ts: chrono::DateTime<chrono::Utc>) -> NaiveDate {
    NaiveDate::from_ymd_opt(ts.year(), ts.month(), ts.day()).unwrap_or(NaiveDate::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn days_and_months_are_found() {
        let one = |text: &str| spans(text);
        assert_eq!(
            one("What did Maria start, as mentioned on 3 June, 2023?"),
            [Span {
                first: d(2023, 6, 3),
                last: d(2023, 6, 3),
                day: true,
                yearly: false
            }]
        );
        assert_eq!(
            one("the week before August 3, 2023")[0].first,
            d(2023, 8, 3)
        );
        assert_eq!(one("on October 13th 2023")[0].first, d(2023, 10, 13));
        let may = one("What did John host in May 2023?");
        assert_eq!(
            may,
            [Span {
                first: d(2023, 5, 1),
                last: d(2023, 5, 31),
                day: false,
                yearly: false
            }]
        );
        assert_eq!(one("2023-12-05")[0].first, d(2023, 12, 5));
        assert_eq!(one("2026年1月5日に")[0].first, d(2026, 1, 5));
        assert_eq!(one("2026年2月")[0].last, d(2026, 2, 28));
        // Words that only look like months: nothing ("in March" is a
        // month of every year, but "may" is none).
        assert!(
            one("I may go in March")
                .iter()
                .all(|s| s.first.month() == 3)
        );
        assert!(one("May I ask what I said? I may go").is_empty());
        assert!(one("a march in the park").is_empty());
        assert!(one("31 February 2023").is_empty());
    }

    #[test]
    fn a_message_of_many_dates_counts_the_first_few() {
        let many: String = (1..=28).map(|d| format!("on {d} June 2023, ")).collect();
        let found = spans(&many);
        assert_eq!(found.len(), MAX_SPANS);
        assert_eq!(found[0], spans("on 1 June 2023")[0]);
        let months = "in January, in February, in March, in April, in May, in June, \
                      in July, in August, in September, in October, in November";
        assert_eq!(spans(months).len(), MAX_SPANS);
    }

    #[test]
    fn a_day_is_told_about_on_the_days_after_it() {
        let day = spans("on 3 June, 2023")[0];
        assert!(!day.is_told_after(d(2023, 6, 3)) && day.contains(d(2023, 6, 3)));
        assert!(day.is_told_after(d(2023, 6, 4)) && day.is_told_after(d(2023, 6, 6)));
        assert!(!day.is_told_after(d(2023, 6, 7)) && !day.is_told_after(d(2023, 6, 2)));
        // Not after a month.
        assert!(!spans("in June 2023")[0].is_told_after(d(2023, 7, 1)));
    }

    #[test]
    fn a_month_with_no_year_is_that_month_of_every_year() {
        for text in [
            "When did Melanie go camping in June?",
            "what did I do on 3 June",
            "during Jun, or mid-June",
        ] {
            let got = spans(text);
            assert_eq!(got.len(), 1, "{text}: {got:?}");
            let june = got[0];
            assert!(june.yearly && !june.day, "{text}");
            assert!(june.contains(d(2023, 6, 27)) && june.contains(d(1999, 6, 1)));
            assert!(!june.contains(d(2023, 7, 1)) && !june.contains(d(2023, 5, 31)));
        }
        // Two months named, both found; with a year, only the dated form.
        assert_eq!(spans("in March or in April").len(), 2);
        let dated = spans("in June 2023");
        assert!(dated.len() == 1 && !dated[0].yearly);
    }
}
