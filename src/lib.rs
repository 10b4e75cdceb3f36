//! claude-session: memory for chat bots around `claude -p`.
//!
//! Data flows one way: `commands` use `memory` for the rules, `memory` uses
//! `store` for bytes on disk, `store` uses `layout` for paths.

pub mod claude;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diag;
pub mod error;
pub mod layout;
pub mod memory;
pub mod state;
pub mod state_dir;
pub mod store;
pub mod supervise;
