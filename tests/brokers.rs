//! What a chat broker relies on beyond one plain `ask`: platform
//! redeliveries (the same message id twice, even at the same instant),
//! group conversations with several senders, spending budgets, and
//! `context --explain` for a context that overflows its size budget.

mod budgets;
mod conversations;
mod explain;
mod groups;
mod redelivery;

use std::process::Output;

use crate::common::{Exit, TestEnv, exit_of, exited, fake_claude, read, stdout_of, write_file};
use serde_json::Value;

/// What `ask` prints when a budget is used up and config has no message.
const DEFAULT_BUDGET_MESSAGE: &str = "Sorry, I can't answer right now: my budget for this period is used up. Please try again later.";

/// Lines of the log whose `msgId` is `id` and those whose `replyTo` is `id`.
fn deliveries(messages: &[Value], id: &str) -> (usize, usize) {
    let logged = messages.iter().filter(|m| m["msgId"] == id).count();
    let replies = messages.iter().filter(|m| m["replyTo"] == id).count();
    (logged, replies)
}
