//! What values a config key accepts: each rule checks a value and says
//! what it must be, in the words of the error (`… is 0; it must be at
//! least 1`) and of the README's "allowed" column. A key names its rule
//! once, in `keys.rs`.

use std::fmt::Display;
use std::path::PathBuf;

/// A rule for values of type `T`. `Err` is the error after the key's
/// name: `is 0; it must be at least 1`, `has "x"; give …`.
pub trait Check<T: ?Sized> {
    fn check(&self, value: &T) -> Result<(), String>;
    /// The README's "allowed" cell; `None` where the type says it all.
    fn allowed(&self) -> Option<String>;
}

/// Any value of the key's type.
pub struct Any;

impl<T: ?Sized> Check<T> for Any {
    fn check(&self, _: &T) -> Result<(), String> {
        Ok(())
    }
    fn allowed(&self) -> Option<String> {
        None
    }
}

/// A number within bounds (finite, for a float).
#[derive(Clone, Copy)]
pub struct Range {
    min: Option<f64>,
    max: Option<f64>,
    /// Replaces "from 0 to 23" where the unit has better words.
    words: Option<&'static str>,
    /// Why the bound is there, after the error in parentheses.
    why: Option<&'static str>,
}

pub const fn at_most(max: u64) -> Range {
    Range {
        min: None,
        max: Some(max as f64),
        words: None,
        why: None,
    }
}

pub const fn at_least(min: u64) -> Range {
    Range {
        min: Some(min as f64),
        max: None,
        words: None,
        why: None,
    }
}

pub const fn from_to(min: f64, max: f64) -> Range {
    Range {
        min: Some(min),
        max: Some(max),
        words: None,
        why: None,
    }
}

impl Range {
    /// What the range is, in the unit's words (`an hour from 0 to 23`).
    pub const fn said(self, words: &'static str) -> Self {
        Self {
            words: Some(words),
            ..self
        }
    }

    /// Why the bound is there (`each retry … keeps the broker waiting`).
    pub const fn because(self, why: &'static str) -> Self {
        Self {
            why: Some(why),
            ..self
        }
    }

    fn words(&self) -> String {
        if let Some(words) = self.words {
            return words.to_owned();
        }
        match (self.min, self.max) {
            (Some(min), Some(max)) => format!("from {min} to {max}"),
            (Some(min), None) => format!("at least {min}"),
            (None, Some(max)) => format!("at most {max}"),
            (None, None) => "any number".to_owned(),
        }
    }

    fn holds(&self, value: f64) -> bool {
        value.is_finite()
            && self.min.is_none_or(|min| value >= min)
            && self.max.is_none_or(|max| value <= max)
    }

    fn refuse(&self, value: impl Display) -> String {
        let why = self.why.map(|why| format!(" ({why})")).unwrap_or_default();
        format!("is {value}; it must be {}{why}", self.words())
    }
}

/// The number types of config keys, compared as `f64` (exact for every
/// bound and for values up to 2^53; beyond, still on the right side).
pub trait Number: Copy + Display {
    fn as_f64(self) -> f64;
}

impl Number for u32 {
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Number for u64 {
    #[allow(clippy::cast_precision_loss)]
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Number for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

impl<T: Number> Check<T> for Range {
    fn check(&self, value: &T) -> Result<(), String> {
        if self.holds(value.as_f64()) {
            Ok(())
        } else {
            Err(self.refuse(*value))
        }
    }
    fn allowed(&self) -> Option<String> {
        Some(self.words())
    }
}

/// An optional number (a budget cap): checked when set.
impl<T: Number> Check<Option<T>> for Range {
    fn check(&self, value: &Option<T>) -> Result<(), String> {
        value.as_ref().map_or(Ok(()), |value| self.check(value))
    }
    fn allowed(&self) -> Option<String> {
        Some(self.words())
    }
}

/// `ask.env`: variable names, or prefixes ending in `*`.
pub struct EnvNames;

impl Check<Vec<String>> for EnvNames {
    fn check(&self, names: &Vec<String>) -> Result<(), String> {
        for name in names {
            let bare = name.strip_suffix('*').unwrap_or(name);
            if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "has {name:?}; give variable names (letters, digits, _) or a \
                     prefix ending in * (`AWS_*`); a bare * would hand claude every secret \
                     of the broker"
                ));
            }
        }
        Ok(())
    }
    fn allowed(&self) -> Option<String> {
        Some("names (letters, digits, `_`), or prefixes ending in `*`".to_owned())
    }
}

/// Paths claude may reach: absolute, as it runs in a folder of its own.
pub struct AbsolutePaths;

impl Check<Vec<PathBuf>> for AbsolutePaths {
    fn check(&self, paths: &Vec<PathBuf>) -> Result<(), String> {
        match paths.iter().find(|p| !p.is_absolute()) {
            Some(path) => Err(format!(
                "has {path:?}; give absolute paths (claude runs in a folder of its own)"
            )),
            None => Ok(()),
        }
    }
    fn allowed(&self) -> Option<String> {
        Some("absolute paths".to_owned())
    }
}

/// Tool names and rules: none empty.
pub struct Names;

impl Check<Vec<String>> for Names {
    fn check(&self, names: &Vec<String>) -> Result<(), String> {
        if names.iter().any(|t| t.trim().is_empty()) {
            Err("has an empty name; remove it".to_owned())
        } else {
            Ok(())
        }
    }
    fn allowed(&self) -> Option<String> {
        Some("non-empty names".to_owned())
    }
}
