
use builtin;
use str;

set edit:completion:arg-completer[claude-session] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'claude-session'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'claude-session'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand ask 'Log a message, answer it with `claude -p` and the user''s memory, print the reply'
            cand append 'Log one message (any role), for brokers that call claude themselves'
            cand context 'Print the memory context block that `ask` would inject'
            cand compact 'Summarise old messages of one user or all users now'
            cand maintain 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron'
            cand session 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export'
            cand doctor 'Check everything a broker needs before going live; say what to fix'
            cand mcp 'A read-only MCP server on stdio over one person''s (or one conversation''s) memory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;ask'= {
            cand -u 'The user (sender) the message belongs to'
            cand --user 'The user (sender) the message belongs to'
            cand --msg-id 'The platform''s message id (kept as `msgId`)'
            cand --thread 'Thread id (kept as `threadId`)'
            cand --group 'Group id (kept as `groupId`)'
            cand --attach 'A file sent with the message, as PATH or PATH:NAME; repeat for several'
            cand --source 'Platform name stored in the line''s `channel` field [default: --channel]'
            cand --conversation 'Group or thread whose shared memory this message belongs to; --user stays the sender'
            cand --display-name 'The sender''s name: kept as `userName` in a conversation; on `ask`, names a new profile'
            cand --system-prompt 'Base system prompt [default: config ask.systemPrompt]'
            cand --system-prompt-file 'Read the base system prompt from a file'
            cand --append-system-prompt 'Keep claude''s own system prompt and append TEXT plus the memory context to it'
            cand --output-format 'Output format of the reply (`json` is the same as --json)'
            cand --claude-bin 'The claude program [default: `claude` on PATH]'
            cand --timeout 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]'
            cand --model 'Model for claude (passed as `--model`)'
            cand --claude-arg 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --no-compact 'Do not compact after answering, even when over the threshold'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;append'= {
            cand -u 'The user (sender) the message belongs to'
            cand --user 'The user (sender) the message belongs to'
            cand --msg-id 'The platform''s message id (kept as `msgId`)'
            cand --thread 'Thread id (kept as `threadId`)'
            cand --group 'Group id (kept as `groupId`)'
            cand --attach 'A file sent with the message, as PATH or PATH:NAME; repeat for several'
            cand --source 'Platform name stored in the line''s `channel` field [default: --channel]'
            cand --conversation 'Group or thread whose shared memory this message belongs to; --user stays the sender'
            cand --display-name 'The sender''s name: kept as `userName` in a conversation; on `ask`, names a new profile'
            cand --role 'Who spoke'
            cand --ts 'Time of the message, RFC 3339 [default: now]'
            cand --jsonl 'Import seed-format message lines from FILE (or - for stdin); all or nothing'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;context'= {
            cand -u 'Whose memory'
            cand --user 'Whose memory'
            cand -n 'Number of recent messages [default: config stm.contextWindow]'
            cand --window 'Number of recent messages [default: config stm.contextWindow]'
            cand --conversation 'Whose shared memory, for a group or thread (--user is then the sender)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --explain 'List each part, its size and estimated tokens, and what the size budget dropped or cut'
            cand --show-config 'Print the effective configuration (defaults merged with config.json) instead'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;compact'= {
            cand -u 'Compact this user'
            cand --user 'Compact this user'
            cand --conversation 'Compact this group or thread conversation'
            cand --claude-bin 'The claude program [default: `claude` on PATH]'
            cand --timeout 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]'
            cand --model 'Model for claude (passed as `--model`)'
            cand --claude-arg 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --all 'Compact every user over the threshold'
            cand --force 'Compact even under the threshold (anything beyond the context window)'
            cand --dry-run 'Say what would be compacted; change nothing, call nothing'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;maintain'= {
            cand --only 'Run only these tasks (stm-expiry, log-rotation, compact, daily, weekly, prune)'
            cand --jobs 'LLM calls run in parallel'
            cand --max-llm-calls 'At most N LLM calls this run; the rest waits for the next run'
            cand --now 'Pretend the time is this (RFC 3339), for catching up and tests'
            cand --claude-bin 'The claude program [default: `claude` on PATH]'
            cand --timeout 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]'
            cand --model 'Model for claude (passed as `--model`)'
            cand --claude-arg 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --dry-run 'List every action; change nothing, call nothing'
            cand --force 'Regenerate summaries that already exist'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand status 'Channel-wide or one user''s counts, storage and spend'
            cand users 'One row per person (1:1 or in groups): messages, last activity, size, spend'
            cand conversations 'One row per conversation (group or thread): messages, people, last activity, spend'
            cand show 'The conversation, readable'
            cand clear 'Clear a user''s short-term memory, or with --all everything of the user'
            cand profile 'Show, replace or edit a user''s profile'
            cand topics 'List topic notes'
            cand topic 'Show or set one topic note'
            cand forget 'Delete a topic note'
            cand search 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
            cand export 'Export everything of a user'
            cand reindex 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;session;status'= {
            cand -u 'Show this user only'
            cand --user 'Show this user only'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;users'= {
            cand --sort 'Order of the rows, largest or newest first'
            cand --limit 'Show at most N users'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;conversations'= {
            cand --sort 'Order of the rows, largest or newest first'
            cand --limit 'Show at most N conversations'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;show'= {
            cand -u 'Whose conversation'
            cand --user 'Whose conversation'
            cand --conversation 'A group or thread conversation instead of a user''s'
            cand -n 'Last N messages'
            cand --since 'Only messages on or after DATE (YYYY-MM-DD or RFC 3339)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --archive 'Include the gzip archives, oldest first'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;clear'= {
            cand -u 'Whose memory'
            cand --user 'Whose memory'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --all 'Everything: STM, profile, summaries, archive, index entry'
            cand -y 'Do not ask for confirmation'
            cand --yes 'Do not ask for confirmation'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;profile'= {
            cand -u 'Whose profile'
            cand --user 'Whose profile'
            cand --set 'Replace it with FILE (or - for stdin)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --edit 'Open it in $VISUAL or $EDITOR'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;topics'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;topic'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand show 'Print a topic note'
            cand set 'Write a topic note from FILE (or - / nothing for stdin)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;session;topic;show'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;topic;set'= {
            cand --tags 'Tags, comma-separated'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;topic;help'= {
            cand show 'Print a topic note'
            cand set 'Write a topic note from FILE (or - / nothing for stdin)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;session;topic;help;show'= {
        }
        &'claude-session;session;topic;help;set'= {
        }
        &'claude-session;session;topic;help;help'= {
        }
        &'claude-session;session;forget'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;search'= {
            cand -u 'Only this person: their own memory, and what they said (or were answered) in groups'
            cand --user 'Only this person: their own memory, and what they said (or were answered) in groups'
            cand --conversation 'Only this group or thread conversation'
            cand --role 'Only messages of this role (leaves out summaries, profiles and topics)'
            cand --since 'Only what was said on or after this (YYYY-MM-DD, midnight UTC, or RFC 3339)'
            cand --until 'Only what was said before this; a bare YYYY-MM-DD includes that whole day'
            cand --kind 'Only these kinds of file; comma-separated or repeated'
            cand --tag 'Only profiles and topic notes with this tag; repeat for several'
            cand -n 'Show at most N hits, the newest; 0 shows all'
            cand --limit 'Show at most N hits, the newest; 0 shows all'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand -e 'QUERY is a regular expression (Rust regex syntax, case-insensitive)'
            cand --regex 'QUERY is a regular expression (Rust regex syntax, case-insensitive)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;export'= {
            cand -u 'Whose data'
            cand --user 'Whose data'
            cand --out 'Where to write it (must not exist yet, or be an empty folder)'
            cand --format 'dir: the sessions layout; json: one document; tar.gz: the dir, packed'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;reindex'= {
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;session;help'= {
            cand status 'Channel-wide or one user''s counts, storage and spend'
            cand users 'One row per person (1:1 or in groups): messages, last activity, size, spend'
            cand conversations 'One row per conversation (group or thread): messages, people, last activity, spend'
            cand show 'The conversation, readable'
            cand clear 'Clear a user''s short-term memory, or with --all everything of the user'
            cand profile 'Show, replace or edit a user''s profile'
            cand topics 'List topic notes'
            cand topic 'Show or set one topic note'
            cand forget 'Delete a topic note'
            cand search 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
            cand export 'Export everything of a user'
            cand reindex 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;session;help;status'= {
        }
        &'claude-session;session;help;users'= {
        }
        &'claude-session;session;help;conversations'= {
        }
        &'claude-session;session;help;show'= {
        }
        &'claude-session;session;help;clear'= {
        }
        &'claude-session;session;help;profile'= {
        }
        &'claude-session;session;help;topics'= {
        }
        &'claude-session;session;help;topic'= {
            cand show 'Print a topic note'
            cand set 'Write a topic note from FILE (or - / nothing for stdin)'
        }
        &'claude-session;session;help;topic;show'= {
        }
        &'claude-session;session;help;topic;set'= {
        }
        &'claude-session;session;help;forget'= {
        }
        &'claude-session;session;help;search'= {
        }
        &'claude-session;session;help;export'= {
        }
        &'claude-session;session;help;reindex'= {
        }
        &'claude-session;session;help;help'= {
        }
        &'claude-session;doctor'= {
            cand --claude-bin 'The claude program [default: `claude` on PATH]'
            cand --timeout 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]'
            cand --model 'Model for claude (passed as `--model`)'
            cand --claude-arg 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --live 'Also make one minimal real call to claude (costs a few tokens)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;mcp'= {
            cand -u 'The person whose memory the tools read'
            cand --user 'The person whose memory the tools read'
            cand --conversation 'Read this group or thread conversation instead (the person must have written in it)'
            cand --state-dir 'The state dir that holds `sessions/` (the seed''s channel folder)'
            cand --channel 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)'
            cand --json 'Print machine-readable JSON on stdout'
            cand -v 'Say more on stderr; shows the cause chain of errors'
            cand --verbose 'Say more on stderr; shows the cause chain of errors'
            cand -q 'Print no warnings, only errors'
            cand --quiet 'Print no warnings, only errors'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'claude-session;help'= {
            cand ask 'Log a message, answer it with `claude -p` and the user''s memory, print the reply'
            cand append 'Log one message (any role), for brokers that call claude themselves'
            cand context 'Print the memory context block that `ask` would inject'
            cand compact 'Summarise old messages of one user or all users now'
            cand maintain 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron'
            cand session 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export'
            cand doctor 'Check everything a broker needs before going live; say what to fix'
            cand mcp 'A read-only MCP server on stdio over one person''s (or one conversation''s) memory'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'claude-session;help;ask'= {
        }
        &'claude-session;help;append'= {
        }
        &'claude-session;help;context'= {
        }
        &'claude-session;help;compact'= {
        }
        &'claude-session;help;maintain'= {
        }
        &'claude-session;help;session'= {
            cand status 'Channel-wide or one user''s counts, storage and spend'
            cand users 'One row per person (1:1 or in groups): messages, last activity, size, spend'
            cand conversations 'One row per conversation (group or thread): messages, people, last activity, spend'
            cand show 'The conversation, readable'
            cand clear 'Clear a user''s short-term memory, or with --all everything of the user'
            cand profile 'Show, replace or edit a user''s profile'
            cand topics 'List topic notes'
            cand topic 'Show or set one topic note'
            cand forget 'Delete a topic note'
            cand search 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
            cand export 'Export everything of a user'
            cand reindex 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
        }
        &'claude-session;help;session;status'= {
        }
        &'claude-session;help;session;users'= {
        }
        &'claude-session;help;session;conversations'= {
        }
        &'claude-session;help;session;show'= {
        }
        &'claude-session;help;session;clear'= {
        }
        &'claude-session;help;session;profile'= {
        }
        &'claude-session;help;session;topics'= {
        }
        &'claude-session;help;session;topic'= {
            cand show 'Print a topic note'
            cand set 'Write a topic note from FILE (or - / nothing for stdin)'
        }
        &'claude-session;help;session;topic;show'= {
        }
        &'claude-session;help;session;topic;set'= {
        }
        &'claude-session;help;session;forget'= {
        }
        &'claude-session;help;session;search'= {
        }
        &'claude-session;help;session;export'= {
        }
        &'claude-session;help;session;reindex'= {
        }
        &'claude-session;help;doctor'= {
        }
        &'claude-session;help;mcp'= {
        }
        &'claude-session;help;help'= {
        }
    ]
    $completions[$command]
}
