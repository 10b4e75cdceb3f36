//! The integration tests: one test binary (`cargo test --test integration`),
//! a module per feature, as ripgrep and just lay theirs out. One binary is
//! linked once instead of once per file, and every helper lives once, in
//! [`common`].
//!
//! Each module drives the built binary (`CARGO_BIN_EXE_claude-session`) in
//! its own temporary state dir, so tests share no state and run in
//! parallel; none sets a variable of this process's environment. Run one
//! feature with `cargo test --test integration session::`, one test by
//! its name.

mod common;

mod append;
mod architecture;
mod ask;
mod auto_recall;
mod bad_input;
mod broker_examples;
mod brokers;
mod compact;
mod concurrency;
mod context;
mod crash;
mod doctor;
mod generated;
mod ids;
mod maintain;
mod operators;
mod owner_files;
mod properties;
mod readme;
mod real_attachments;
mod real_claude;
mod real_isolation;
mod real_mentions;
mod real_stream;
mod recall;
mod recall_index;
mod search;
mod seed_compat;
mod session;
mod stream;
mod stress;
