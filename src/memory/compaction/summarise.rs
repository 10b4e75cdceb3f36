//! The LLM call of a compaction: the prompt (instructions, previous
//! summary, older messages), the JSON Schema of the answer, reading the
//! answer (structured or in text), which profile gets which facts, and the
//! next summary document.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use super::plan::{Plan, senders};
use crate::claude::{Claude, Reply, Request, SystemPromptMode};
use crate::layout::{MemoryKey, UserId};
use crate::memory::ltm::ProfileFacts;
use crate::memory::message::format_ts;
use crate::memory::prompts;
use crate::memory::transcript::format_message;
use crate::state::State;
use crate::store::frontmatter::Document;

/// The structured answer of a compaction call.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Answer {
    pub(super) summary: String,
    /// About the user of a one-to-one conversation.
    #[serde(default)]
    pub(super) facts: Option<ProfileFacts>,
    /// About each sender of a group conversation, by user id.
    #[serde(default)]
    pub(super) people: Option<std::collections::BTreeMap<String, ProfileFacts>>,
}

/// Which profile gets which facts. In a group, only people who spoke in
/// the compacted messages, each with their own facts; one-to-one, the
/// conversation's user.
pub(super) fn facts_by_user(
    key: &MemoryKey,
    plan: &Plan,
    answer: Answer,
) -> Vec<(UserId, ProfileFacts)> {
    let senders = senders(plan);
    if senders.is_empty() {
        // A conversation has no profile: facts with no sender go nowhere.
        let Some(person) = key.person_id() else {
            return Vec::new();
        };
        return answer.facts.map(|f| (person, f)).into_iter().collect();
    }
    answer
        .people
        .unwrap_or_default()
        .into_iter()
        .filter(|(id, _)| senders.contains(id))
        .filter_map(|(id, facts)| UserId::new(&id).ok().map(|user| (user, facts)))
        .collect()
}

/// The answer, or `None` when the reply was not the JSON asked for.
pub(super) fn summarise(
    state: &State,
    claude: &Claude,
    plan: &Plan,
) -> anyhow::Result<(Option<Answer>, Reply)> {
    let auto_profile = state.config.ltm.auto_profile;
    let group = !senders(plan).is_empty();
    let mut system = state
        .config
        .compacting
        .summary_prompt
        .clone()
        .unwrap_or_else(|| prompts::SUMMARY_INSTRUCTIONS.to_owned());
    if auto_profile {
        let default = if group {
            prompts::PEOPLE_INSTRUCTIONS
        } else {
            prompts::PROFILE_INSTRUCTIONS
        };
        system.push_str("\n\n");
        system.push_str(
            state
                .config
                .ltm
                .profile_prompt
                .as_deref()
                .unwrap_or(default),
        );
    }
    system.push_str("\n\n");
    system.push_str(match (auto_profile, group) {
        (false, _) => prompts::ANSWER_SUMMARY_ONLY,
        (true, false) => prompts::ANSWER_WITH_FACTS,
        (true, true) => prompts::ANSWER_WITH_PEOPLE,
    });

    let previous = plan
        .previous
        .as_ref()
        .map(|doc| doc.body.trim())
        .filter(|body| !body.is_empty())
        .unwrap_or("(none yet)");
    let mut prompt = format!("Summary so far:\n{previous}\n\nOlder messages to fold in:\n");
    for message in &plan.messages {
        prompt.push_str(&format_message(message));
        prompt.push('\n');
    }
    let schema = answer_schema(auto_profile, group).to_string();
    let sandbox = claude.sandbox()?;
    let reply = claude.call_in(
        &sandbox,
        Request {
            system_prompt: Some((SystemPromptMode::Replace, system)),
            prompt: &prompt,
            json_schema: Some(&schema),
            ..Request::default()
        },
    )?;
    let answer = match &reply.structured {
        Some(value) => serde_json::from_value::<Answer>(value.clone())
            .ok()
            .filter(|a| !a.summary.trim().is_empty()),
        None => parse_answer(&reply.text),
    };
    Ok((answer, reply))
}

/// The JSON Schema of the answer, for claude's structured output: a model
/// that must answer through it cannot wrap the JSON in prose.
fn answer_schema(auto_profile: bool, group: bool) -> Value {
    let facts = json!({
        "type": "object",
        "properties": {
            "name": {"type": ["string", "null"]},
            "language": {"type": ["string", "null"]},
            "timezone": {"type": ["string", "null"]},
            "preferences": {"type": "array", "items": {"type": "string"}},
            "topics": {"type": "array", "items": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}}
        }
    });
    let mut properties = json!({"summary": {"type": "string"}});
    match (auto_profile, group) {
        (false, _) => {}
        (true, false) => properties["facts"] = facts,
        (true, true) => {
            properties["people"] = json!({"type": "object", "additionalProperties": facts});
        }
    }
    json!({"type": "object", "properties": properties, "required": ["summary"]})
}

/// The JSON object in a text reply (fenced or not), from a claude that
/// gave no structured output.
fn parse_answer(text: &str) -> Option<Answer> {
    let json = match (text.find('{'), text.rfind('}')) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => "",
    };
    serde_json::from_str::<Answer>(json)
        .ok()
        .filter(|answer| !answer.summary.trim().is_empty())
}

pub(super) fn next_summary(
    plan: &Plan,
    body: &str,
    cost: Option<f64>,
    user: &MemoryKey,
    now: DateTime<Utc>,
) -> Document {
    let mut doc = plan.previous.clone().unwrap_or_default();
    let before = doc.get_u64("messages_compacted").unwrap_or(0);
    let total_cost = doc.get_f64("total_cost_usd").unwrap_or(0.0);
    doc.set("user_id", user.as_str());
    doc.set("last_compacted", format_ts(&now));
    doc.set("messages_compacted", before + plan.messages.len() as u64);
    if let Some(cost) = cost {
        doc.set("last_cost_usd", cost);
        doc.set("total_cost_usd", total_cost + cost);
    }
    doc.body = body.trim().to_owned();
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_fenced_or_plain() {
        let a =
            parse_answer("```json\n{\"summary\": \"S\", \"facts\": {\"name\": \"Kevin\"}}\n```");
        let a = a.unwrap();
        assert_eq!(a.summary, "S");
        assert_eq!(a.facts.unwrap().name.as_deref(), Some("Kevin"));
        assert!(parse_answer("They talked about tea.").is_none());
        assert!(parse_answer("{\"summary\": \"  \"}").is_none());
    }
}
