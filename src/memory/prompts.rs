//! The instructions this tool gives claude, plain text, easy to read and
//! change: compaction's, the daily and weekly summaries', and `ask`'s
//! default base prompt. Config may replace the instruction parts
//! (`compacting.summaryPrompt`, `ltm.profilePrompt`).
//!
//! The few lines that belong to one feature stay with it: the context
//! heading ([`crate::memory::turn::CONTEXT_HEADING`]), the recall line
//! and the memory tools' descriptions (`commands::mcp`), the list of
//! attached files (`commands::attachments`) and `doctor --live`'s probe.

/// Compaction: how to summarise. Followed by the answer format.
pub const SUMMARY_INSTRUCTIONS: &str = "\
You maintain the memory of a chat assistant. You are given the summary of the \
conversation so far (it may be empty) and the older messages that are about to \
leave the assistant's short-term memory. Write an updated summary that replaces \
the old one: keep every fact, decision, open question, promise and preference \
that could matter later, drop small talk, and write in the language the user \
writes in. Use short paragraphs or bullet points; at most about 400 words.";

/// Compaction: what durable facts about the user to extract.
pub const PROFILE_INSTRUCTIONS: &str = "\
Also extract durable facts about the user that should be remembered for a long \
time: their name, the language they write in, their timezone, stable \
preferences, and ongoing topics or projects. Only facts the user stated or \
clearly showed; nothing guessed, nothing about other people.";

/// The answer format of a compaction call, with profile facts.
pub const ANSWER_WITH_FACTS: &str = r#"Answer with a single JSON object and nothing else:
{"summary": "the updated summary",
 "facts": {"name": null, "language": null, "timezone": null,
           "preferences": [], "topics": [], "tags": []}}
Use null or [] where nothing is known. "tags" are a few short keywords, each spelt as the user writes it (TOEIC, Python), without commas."#;

/// The answer format of a compaction call without profile facts.
pub const ANSWER_SUMMARY_ONLY: &str = r#"Answer with a single JSON object and nothing else:
{"summary": "the updated summary"}"#;

/// Daily summary of one user's day.
pub const DAILY_INSTRUCTIONS: &str = "\
Summarise this day of a chat between a user and an assistant for the \
assistant's long-term memory: what was discussed, decided, asked and promised. \
Write in the language the user writes in; at most about 200 words. Answer with \
the summary text only.";

/// Weekly summary combining the daily ones.
pub const WEEKLY_INSTRUCTIONS: &str = "\
Combine these daily summaries of one week of a chat between a user and an \
assistant into one weekly summary for the assistant's long-term memory: the \
main topics, decisions, open questions and changes over the week. Write in \
the language of the summaries; at most about 300 words. Answer with the \
summary text only.";

/// Compaction of a group conversation: facts per person, never mixed.
pub const PEOPLE_INSTRUCTIONS: &str = "\
This is a group conversation: each user line names its sender as \
`Name (id)`. Also extract durable facts about each sender that should be \
remembered for a long time: their name, language, timezone, stable \
preferences and ongoing topics. Only what that person stated or clearly \
showed about themselves; never attribute one person's facts to another.";

/// The answer format of a group compaction call.
pub const ANSWER_WITH_PEOPLE: &str = r#"Answer with a single JSON object and nothing else:
{"summary": "the updated summary",
 "people": {"<sender id>": {"name": null, "language": null, "timezone": null,
                            "preferences": [], "topics": [], "tags": []}}}
Key "people" by the ids shown in parentheses; leave out people with no facts."#;

/// The base system prompt of `ask` when the operator gives none: claude as
/// a chat assistant, not a coding agent. The memory context follows it.
pub const CHAT_BASE_PROMPT: &str = "\
You are a helpful assistant answering people in a chat app. Reply in the \
language the person writes in, in plain conversational text that reads well \
in a chat (short paragraphs, simple lists; no headings or tables unless \
asked). Below is what you remember of this conversation: use it to answer \
in context, and do not mention it unless asked.";
