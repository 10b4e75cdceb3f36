//! One turn of a conversation: the protocol every answered message follows.
//!
//! 1. Under the conversation's lock, in one hold: look for an earlier
//!    delivery of the message id, read the context, log the message (so it
//!    is not sent twice, as prompt and as context), claim the id.
//! 2. Out of the lock: add recall, call claude, log the reply and its cost.
//! 3. Show the reply (the caller renders it) while the id is still claimed,
//!    then release the claim.
//! 4. Decide whether compaction is due; after the caller has closed its
//!    output, run it ([`Turn::compact_after_reply`]).
//!
//! The same message id again (a platform re-sending a webhook) shows the
//! reply already given; if the first delivery is still being answered it
//! waits for it; if that failed, it answers now without logging the
//! message twice. A budget cap logs the message and shows
//! `budget.message` instead of calling claude (exit 7).
//!
//! What a turn does not know: where the message came from (arguments,
//! files) and how a reply is printed; `commands::ask` does both.

use chrono::{DateTime, Utc};

use crate::claude::{Claude, Reply, Request, Sandbox, SystemPromptMode, UserInput};
use crate::config::CompactionMode;
use crate::error::{Exit, failure};
use crate::layout::{MemoryKey, UserId};
use crate::memory::compaction;
use crate::memory::context::{self, Parts, Query};
use crate::memory::message::Message;
use crate::memory::stm::{self, Claim, Delivery, Intake};
use crate::memory::{ledger, ltm};
use crate::state::State;

/// What the seed's brokers put between the base prompt and the context.
pub const CONTEXT_HEADING: &str = "\n\n## Recent conversation context:\n";

/// What a turn answers when a budget cap is reached (config `budget.message`).
const BUDGET_MESSAGE: &str = "Sorry, I can't answer right now: my budget for this period is used up. Please try again later.";

/// Everything one turn works with, settled before anything is logged.
pub struct Turn<'a> {
    pub state: &'a State,
    /// Who sent the message: their profile is injected, their budget counts.
    pub sender: &'a UserId,
    /// Whose short-term memory: the sender's, or a group's.
    pub key: &'a MemoryKey,
    /// The sender's display name, when the platform gave one: it starts
    /// their profile.
    pub display_name: Option<&'a str>,
    /// The reply's runner.
    pub claude: Claude,
    pub mode: SystemPromptMode,
    /// The base system prompt the context is appended to.
    pub base: Option<String>,
    pub message: Message,
    /// What claude gets as the user's turn for the message's text (the
    /// attachments, put into the call's sandbox).
    pub input: &'a dyn Fn(&str, &Sandbox) -> UserInput,
    /// Streaming: each piece of the reply as claude writes it.
    pub on_text: Option<&'a dyn Fn(&str)>,
}

/// A reply to show, and how it came about (for `--json` and the `done`
/// event of a stream).
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    pub text: &'a str,
    /// The call that made it; none when it was not made now.
    pub reply: Option<&'a Reply>,
    /// A compaction was due and started.
    pub compacted: bool,
    /// The reply already logged for this message id, not a new call.
    pub replayed: bool,
    /// The message id was logged before with different text.
    pub conflict: bool,
    /// A budget cap stopped the call; the reply is `budget.message`.
    pub budget_stopped: bool,
}

impl<'a> Shown<'a> {
    fn new(text: &'a str, reply: Option<&'a Reply>) -> Self {
        Self {
            text,
            reply,
            compacted: false,
            replayed: false,
            conflict: false,
            budget_stopped: false,
        }
    }
}

/// How a turn ended, once its reply was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// A new answer: compaction may be due.
    Answered { compact_due: bool },
    /// A redelivery, answered from the log or answered again.
    Redelivered,
}

impl Turn<'_> {
    /// Take the message in, answer it and hand the reply to `show` (once,
    /// while its id is still claimed). `no_compact`: never start a
    /// compaction for this turn (`ask --no-compact`).
    pub fn take(
        &self,
        no_compact: bool,
        show: &mut dyn FnMut(Shown) -> anyhow::Result<()>,
    ) -> anyhow::Result<Ended> {
        let (state, sender, now) = (self.state, self.sender, self.message.ts);
        if let Some(name) = self.display_name {
            ltm::ensure_profile(state, sender, name, self.message.channel.as_deref(), now)?;
        }
        let over_budget = ledger::ask_cap_reached(state, sender, now)?;

        // Recall is added after the lock is released (below).
        let read_context =
            || context::gather(state, self.key, sender, state.config.context_window());
        let intake = stm::take_in(
            state,
            self.key,
            &self.message,
            over_budget.is_none().then_some(read_context),
        )?;
        let (mut parts, claim) = match (intake, over_budget) {
            (Intake::Redelivery(delivery), over_budget) => {
                self.redelivered(*delivery, over_budget, show)?;
                return Ok(Ended::Redelivered);
            }
            (
                Intake::Logged {
                    read: Some(parts),
                    claim,
                },
                _,
            ) => (parts, claim),
            (Intake::Logged { read: None, .. }, over_budget) => {
                let why = over_budget.expect("no context is read only over budget");
                return Err(self.refuse_over_budget(&why, show));
            }
        };

        // Out of the lock, the message logged: it is no passage of its own.
        context::add_recall(
            state,
            self.key,
            sender,
            &mut parts,
            self.query(),
            Some(&self.message),
        )?;
        let reply = self.answer(&parts)?;
        let compact_due = !no_compact
            && state.config.compacting.enabled
            && compaction::may_need(state, self.key, false).unwrap_or(false);
        show(Shown {
            compacted: compact_due,
            ..Shown::new(&reply.text, Some(&reply))
        })?;
        if let Some(claim) = claim {
            claim.release();
        }
        Ok(Ended::Answered { compact_due })
    }

    /// The message as the query of recall.
    fn query(&self) -> Query<'_> {
        Query {
            text: &self.message.text,
            msg_id: self.message.msg_id.as_deref(),
            explain: false,
        }
    }

    /// Call claude with the context and log its reply (with usage and cost).
    fn answer(&self, parts: &Parts) -> anyhow::Result<Reply> {
        let state = self.state;
        let rendered = context::render(parts, state.config.stm.max_context_chars as usize);
        let sandbox = self.claude.sandbox()?;
        let given = (self.input)(&self.message.text, &sandbox);
        let request = Request {
            system_prompt: system_prompt(self.mode, self.base.clone(), &rendered.text),
            prompt: &given.prompt,
            json_schema: None,
            images: &given.images,
            read_work_folder: given.read_work_folder,
        };
        // The one difference streaming makes: how claude's output is read.
        let reply = match self.on_text {
            Some(on_text) => self
                .claude
                .call_streaming_in(&sandbox, request, &mut |piece| on_text(piece))?,
            None => self.claude.call_in(&sandbox, request)?,
        };
        drop(sandbox);
        let now = self.state.clock.now();
        let message = &self.message;
        let stored = stm::cap_reply(&reply.text, state.config.limits.max_reply_bytes);
        let mut answer = Message::reply_line(message, stored, now);
        answer.usage = reply.usage.clone();
        answer.cost_usd = reply.cost_usd;
        // The reply is paid for and the user waits for it: a failure to log
        // it is reported, but does not keep the reply from being shown.
        if let Err(e) = stm::append_answer(state, self.key, self.sender, message.ts, &answer) {
            crate::diag::warn(format!(
                "the reply could not be logged in {}'s memory: {e:#}",
                self.key
            ));
        }
        if let Err(e) = ledger::record_ask(state, self.sender, &reply, now) {
            crate::diag::warn(format!("could not record the cost of this answer: {e:#}"));
        }
        Ok(reply)
    }

    /// The same message id again: show the reply already given; if the
    /// first delivery is still being answered, wait for it; if it failed,
    /// answer now without logging the message twice.
    fn redelivered(
        &self,
        delivery: Delivery,
        over_budget: Option<String>,
        show: &mut dyn FnMut(Shown) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let id = self
            .message
            .msg_id
            .as_deref()
            .expect("only an id is redelivered");
        // The same id with other text: a broker reusing ids, not a
        // redelivery. The first answer stands (the id is taken), but never
        // silently.
        let conflict = delivery
            .text
            .as_ref()
            .is_some_and(|logged| logged != &self.message.text);
        if conflict {
            crate::diag::warn(format!(
                "message id {id} was already logged with different text; answering with the reply \
                 to that first message; give each message its own --msg-id"
            ));
        }
        let replayed = |text| Shown {
            replayed: true,
            conflict,
            ..Shown::new(text, None)
        };
        if let Some(reply) = delivery.reply {
            return show(replayed(&reply.text));
        }
        let wait = self.claude.timeout + std::time::Duration::from_secs(5);
        let waiting_since = self.state.clock.now();
        let claim = stm::wait_for_claim(self.state, self.key, id, wait)?;
        let (delivery, mut parts) = self.read_again(id)?;
        context::add_recall(
            self.state,
            self.key,
            self.sender,
            &mut parts,
            self.query(),
            None,
        )?;
        if let Some(reply) = delivery.reply {
            show(replayed(&reply.text))?;
            claim.release();
            return Ok(());
        }
        // The first attempt failed or was killed: answer it now, if the
        // budget still allows a call.
        if let Some(why) = over_budget {
            drop(claim);
            return Err(self.refuse_over_budget(&why, show));
        }
        let reply = self.answer_for(&claim, waiting_since, &parts)?;
        show(Shown {
            conflict,
            ..Shown::new(&reply.text, Some(&reply))
        })?;
        claim.release();
        Ok(())
    }

    /// Under the lock again, with the id claimed: what the log holds for
    /// it now, and the context without the message itself.
    fn read_again(&self, id: &str) -> anyhow::Result<(Delivery, Parts)> {
        let (state, key, sender) = (self.state, self.key, self.sender);
        stm::find_delivery_and(state, key, id, self.message.ts, || {
            let mut parts = context::gather(state, key, sender, state.config.context_window() + 1)?;
            parts.messages.retain(|m| m.msg_id.as_deref() != Some(id));
            Ok(parts)
        })
    }

    /// Answer a message whose first attempt failed, noting the outcome
    /// in the claim for the redeliveries that wait on it.
    fn answer_for(
        &self,
        claim: &Claim,
        waiting_since: DateTime<Utc>,
        parts: &Parts,
    ) -> anyhow::Result<Reply> {
        if let Some(shared) = claim.failed_since(waiting_since) {
            return Err(shared);
        }
        match self.answer(parts) {
            Ok(reply) => {
                claim.clear_failure();
                Ok(reply)
            }
            Err(e) => {
                claim.record_failure(&e);
                Err(e)
            }
        }
    }

    /// Show the budget note (for the chat); the error (exit 7) gives the
    /// reason.
    fn refuse_over_budget(
        &self,
        why: &str,
        show: &mut dyn FnMut(Shown) -> anyhow::Result<()>,
    ) -> anyhow::Error {
        let budget = &self.state.config.budget;
        let text = budget.message.as_deref().unwrap_or(BUDGET_MESSAGE);
        if let Err(e) = show(Shown {
            budget_stopped: true,
            ..Shown::new(text, None)
        }) {
            return e;
        }
        failure(Exit::OverBudget, format!("no call made: {why}"))
    }

    /// Run the compaction [`Turn::take`] found due: inline, or started in
    /// the background by `start_background` (with the compactor's runner).
    /// The answer was delivered: a failure is logged and retried by the
    /// next turn or by maintain, not reported as a failed turn.
    pub fn compact_after_reply(&self, start_background: &dyn Fn(&Claude) -> anyhow::Result<()>) {
        let state = self.state;
        let compactor = self.compactor();
        let result = match state.config.compacting.mode {
            CompactionMode::Inline => compaction::compact_user(
                state,
                self.key,
                &|| Ok(Some(compactor.clone())),
                compaction::Options::default(),
            )
            .and_then(compaction::Outcome::budget_stop_as_error)
            .map(|_| ()),
            CompactionMode::Background => start_background(&compactor),
        };
        if let Err(e) = result {
            crate::memory::failures::record(
                state,
                "compaction after a reply",
                Some(self.key.as_str()),
                &e,
            );
            crate::diag::warn(format!(
                "compaction of {} after the reply failed: {e:#}",
                self.key
            ));
        }
    }

    /// The reply's runner made a compactor: its own model
    /// (compacting.model), none of the reply's recall tools.
    fn compactor(&self) -> Claude {
        let config = &self.state.config;
        let mut compactor = self.claude.clone();
        compactor.mcp_config = None;
        compactor.allowed_tools = config.ask.allowed_tools.clone();
        compactor.model = config.compacting.model.clone().filter(|m| !m.is_empty());
        compactor
    }
}

/// Base prompt, then the seed's heading and the context block.
fn system_prompt(
    mode: SystemPromptMode,
    base: Option<String>,
    context: &str,
) -> Option<(SystemPromptMode, String)> {
    let mut text = base.unwrap_or_default();
    if !context.is_empty() {
        text.push_str(CONTEXT_HEADING);
        text.push_str(context);
    }
    let text = text.trim_start_matches('\n').to_owned();
    (!text.is_empty()).then_some((mode, text))
}
