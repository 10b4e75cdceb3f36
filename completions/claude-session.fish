# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_claude_session_global_optspecs
    string join \n state-dir= channel= json v/verbose q/quiet h/help V/version
end

function __fish_claude_session_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_claude_session_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_claude_session_using_subcommand
    set -l cmd (__fish_claude_session_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c claude-session -n "__fish_claude_session_needs_command" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_needs_command" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_needs_command" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_needs_command" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_needs_command" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c claude-session -n "__fish_claude_session_needs_command" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "ask" -d 'Log a message, answer it with `claude -p` and the user\'s memory, print the reply'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "append" -d 'Log one message (any role), for brokers that call claude themselves'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "context" -d 'Print the memory context block that `ask` would inject'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "compact" -d 'Summarise old messages of one user or all users now'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "maintain" -d 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "session" -d 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "doctor" -d 'Check everything a broker needs before going live; say what to fix'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "mcp" -d 'A read-only MCP server on stdio over one person\'s (or one conversation\'s) memory'
complete -c claude-session -n "__fish_claude_session_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -s u -l user -d 'The user (sender) the message belongs to' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l msg-id -d 'The platform\'s message id (kept as `msgId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l thread -d 'Thread id (kept as `threadId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l group -d 'Group id (kept as `groupId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l attach -d 'A file sent with the message, as PATH or PATH:NAME; repeat for several' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l source -d 'Platform name stored in the line\'s `channel` field [default: --channel]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l conversation -d 'Group or thread whose shared memory this message belongs to; --user stays the sender' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l display-name -d 'The sender\'s name: kept as `userName` in a conversation; on `ask`, names a new profile' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l system-prompt -d 'Base system prompt [default: config ask.systemPrompt]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l system-prompt-file -d 'Read the base system prompt from a file' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l append-system-prompt -d 'Keep claude\'s own system prompt and append TEXT plus the memory context to it' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l output-format -d 'Output format of the reply (`json` is the same as --json)' -r -f -a "text\t''
json\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l claude-bin -d 'The claude program [default: `claude` on PATH]' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l timeout -d 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l model -d 'Model for claude (passed as `--model`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l claude-arg -d 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l no-compact -d 'Do not compact after answering, even when over the threshold'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand ask" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -s u -l user -d 'The user (sender) the message belongs to' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l msg-id -d 'The platform\'s message id (kept as `msgId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l thread -d 'Thread id (kept as `threadId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l group -d 'Group id (kept as `groupId`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l attach -d 'A file sent with the message, as PATH or PATH:NAME; repeat for several' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l source -d 'Platform name stored in the line\'s `channel` field [default: --channel]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l conversation -d 'Group or thread whose shared memory this message belongs to; --user stays the sender' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l display-name -d 'The sender\'s name: kept as `userName` in a conversation; on `ask`, names a new profile' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l role -d 'Who spoke' -r -f -a "user\t''
assistant\t''
system\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l ts -d 'Time of the message, RFC 3339 [default: now]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l jsonl -d 'Import seed-format message lines from FILE (or - for stdin); all or nothing' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand append" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s u -l user -d 'Whose memory' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s n -l window -d 'Number of recent messages [default: config stm.contextWindow]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l conversation -d 'Whose shared memory, for a group or thread (--user is then the sender)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l explain -d 'List each part, its size and estimated tokens, and what the size budget dropped or cut'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l show-config -d 'Print the effective configuration (defaults merged with config.json) instead'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand context" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -s u -l user -d 'Compact this user' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l conversation -d 'Compact this group or thread conversation' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l claude-bin -d 'The claude program [default: `claude` on PATH]' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l timeout -d 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l model -d 'Model for claude (passed as `--model`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l claude-arg -d 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l all -d 'Compact every user over the threshold'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l force -d 'Compact even under the threshold (anything beyond the context window)'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l dry-run -d 'Say what would be compacted; change nothing, call nothing'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand compact" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l only -d 'Run only these tasks (stm-expiry, log-rotation, compact, daily, weekly, prune)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l jobs -d 'LLM calls run in parallel' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l max-llm-calls -d 'At most N LLM calls this run; the rest waits for the next run' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l now -d 'Pretend the time is this (RFC 3339), for catching up and tests' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l claude-bin -d 'The claude program [default: `claude` on PATH]' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l timeout -d 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l model -d 'Model for claude (passed as `--model`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l claude-arg -d 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l dry-run -d 'List every action; change nothing, call nothing'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l force -d 'Regenerate summaries that already exist'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand maintain" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "status" -d 'Channel-wide or one user\'s counts, storage and spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "users" -d 'One row per person (1:1 or in groups): messages, last activity, size, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "conversations" -d 'One row per conversation (group or thread): messages, people, last activity, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "show" -d 'The conversation, readable'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "clear" -d 'Clear a user\'s short-term memory, or with --all everything of the user'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "profile" -d 'Show, replace or edit a user\'s profile'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "topics" -d 'List topic notes'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "topic" -d 'Show or set one topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "forget" -d 'Delete a topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "search" -d 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "export" -d 'Export everything of a user'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "reindex" -d 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and not __fish_seen_subcommand_from status users conversations show clear profile topics topic forget search export reindex help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -s u -l user -d 'Show this user only' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -l sort -d 'Order of the rows, largest or newest first' -r -f -a "activity\t''
messages\t''
size\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -l limit -d 'Show at most N users' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from users" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -l sort -d 'Order of the rows, largest or newest first' -r -f -a "activity\t''
messages\t''
size\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -l limit -d 'Show at most N conversations' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from conversations" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s u -l user -d 'Whose conversation' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l conversation -d 'A group or thread conversation instead of a user\'s' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s n -d 'Last N messages' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l since -d 'Only messages on or after DATE (YYYY-MM-DD or RFC 3339)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l archive -d 'Include the gzip archives, oldest first'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s u -l user -d 'Whose memory' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -l all -d 'Everything: STM, profile, summaries, archive, index entry'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s y -l yes -d 'Do not ask for confirmation'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from clear" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -s u -l user -d 'Whose profile' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -l set -d 'Replace it with FILE (or - for stdin)' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -l edit -d 'Open it in $VISUAL or $EDITOR'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from profile" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topics" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -f -a "show" -d 'Print a topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -f -a "set" -d 'Write a topic note from FILE (or - / nothing for stdin)'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from topic" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from forget" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s u -l user -d 'Only this person: their own memory, and what they said (or were answered) in groups' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l conversation -d 'Only this group or thread conversation' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l role -d 'Only messages of this role (leaves out summaries, profiles and topics)' -r -f -a "user\t''
assistant\t''
system\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l since -d 'Only what was said on or after this (YYYY-MM-DD, midnight UTC, or RFC 3339)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l until -d 'Only what was said before this; a bare YYYY-MM-DD includes that whole day' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l kind -d 'Only these kinds of file; comma-separated or repeated' -r -f -a "messages\t''
summaries\t''
profiles\t''
topics\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l tag -d 'Only profiles and topic notes with this tag; repeat for several' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s n -l limit -d 'Show at most N hits, the newest; 0 shows all' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s e -l regex -d 'QUERY is a regular expression (Rust regex syntax, case-insensitive)'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from search" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -s u -l user -d 'Whose data' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -l out -d 'Where to write it (must not exist yet, or be an empty folder)' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -l format -d 'dir: the sessions layout; json: one document; tar.gz: the dir, packed' -r -f -a "dir\t''
json\t''
tar.gz\t''"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from export" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from reindex" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "status" -d 'Channel-wide or one user\'s counts, storage and spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "users" -d 'One row per person (1:1 or in groups): messages, last activity, size, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "conversations" -d 'One row per conversation (group or thread): messages, people, last activity, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "show" -d 'The conversation, readable'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "clear" -d 'Clear a user\'s short-term memory, or with --all everything of the user'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "profile" -d 'Show, replace or edit a user\'s profile'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "topics" -d 'List topic notes'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "topic" -d 'Show or set one topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "forget" -d 'Delete a topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "search" -d 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "export" -d 'Export everything of a user'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "reindex" -d 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
complete -c claude-session -n "__fish_claude_session_using_subcommand session; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l claude-bin -d 'The claude program [default: `claude` on PATH]' -r -F
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l timeout -d 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l model -d 'Model for claude (passed as `--model`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l claude-arg -d 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l live -d 'Also make one minimal real call to claude (costs a few tokens)'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -s u -l user -d 'The person whose memory the tools read' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -l conversation -d 'Read this group or thread conversation instead (the person must have written in it)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -l state-dir -d 'The state dir that holds `sessions/` (the seed\'s channel folder)' -r -f -a "(__fish_complete_directories)"
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -l channel -d 'Use ./.claude/channels/NAME as the state dir (the seed\'s default place)' -r
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -l json -d 'Print machine-readable JSON on stdout'
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -s v -l verbose -d 'Say more on stderr; shows the cause chain of errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -s q -l quiet -d 'Print no warnings, only errors'
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c claude-session -n "__fish_claude_session_using_subcommand mcp" -s V -l version -d 'Print version'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "ask" -d 'Log a message, answer it with `claude -p` and the user\'s memory, print the reply'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "append" -d 'Log one message (any role), for brokers that call claude themselves'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "context" -d 'Print the memory context block that `ask` would inject'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "compact" -d 'Summarise old messages of one user or all users now'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "maintain" -d 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "session" -d 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "doctor" -d 'Check everything a broker needs before going live; say what to fix'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "mcp" -d 'A read-only MCP server on stdio over one person\'s (or one conversation\'s) memory'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and not __fish_seen_subcommand_from ask append context compact maintain session doctor mcp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "status" -d 'Channel-wide or one user\'s counts, storage and spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "users" -d 'One row per person (1:1 or in groups): messages, last activity, size, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "conversations" -d 'One row per conversation (group or thread): messages, people, last activity, spend'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "show" -d 'The conversation, readable'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "clear" -d 'Clear a user\'s short-term memory, or with --all everything of the user'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "profile" -d 'Show, replace or edit a user\'s profile'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "topics" -d 'List topic notes'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "topic" -d 'Show or set one topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "forget" -d 'Delete a topic note'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "search" -d 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "export" -d 'Export everything of a user'
complete -c claude-session -n "__fish_claude_session_using_subcommand help; and __fish_seen_subcommand_from session" -f -a "reindex" -d 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files'
