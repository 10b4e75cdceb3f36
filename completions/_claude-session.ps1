
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'claude-session' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'claude-session'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'claude-session' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Log a message, answer it with `claude -p` and the user''s memory, print the reply')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Log one message (any role), for brokers that call claude themselves')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'Print the memory context block that `ask` would inject')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Summarise old messages of one user or all users now')
            [CompletionResult]::new('maintain', 'maintain', [CompletionResultType]::ParameterValue, 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron')
            [CompletionResult]::new('session', 'session', [CompletionResultType]::ParameterValue, 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check everything a broker needs before going live; say what to fix')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'A read-only MCP server on stdio over one person''s (or one conversation''s) memory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;ask' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'The user (sender) the message belongs to')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The user (sender) the message belongs to')
            [CompletionResult]::new('--msg-id', '--msg-id', [CompletionResultType]::ParameterName, 'The platform''s message id (kept as `msgId`)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Thread id (kept as `threadId`)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Group id (kept as `groupId`)')
            [CompletionResult]::new('--attach', '--attach', [CompletionResultType]::ParameterName, 'A file sent with the message, as PATH or PATH:NAME; repeat for several')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Platform name stored in the line''s `channel` field [default: --channel]')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Group or thread whose shared memory this message belongs to; --user stays the sender')
            [CompletionResult]::new('--display-name', '--display-name', [CompletionResultType]::ParameterName, 'The sender''s name: kept as `userName` in a conversation; on `ask`, names a new profile')
            [CompletionResult]::new('--system-prompt', '--system-prompt', [CompletionResultType]::ParameterName, 'Base system prompt [default: config ask.systemPrompt]')
            [CompletionResult]::new('--system-prompt-file', '--system-prompt-file', [CompletionResultType]::ParameterName, 'Read the base system prompt from a file')
            [CompletionResult]::new('--append-system-prompt', '--append-system-prompt', [CompletionResultType]::ParameterName, 'Keep claude''s own system prompt and append TEXT plus the memory context to it')
            [CompletionResult]::new('--output-format', '--output-format', [CompletionResultType]::ParameterName, 'Output format of the reply (`json` is the same as --json)')
            [CompletionResult]::new('--claude-bin', '--claude-bin', [CompletionResultType]::ParameterName, 'The claude program [default: `claude` on PATH]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model for claude (passed as `--model`)')
            [CompletionResult]::new('--claude-arg', '--claude-arg', [CompletionResultType]::ParameterName, 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--no-compact', '--no-compact', [CompletionResultType]::ParameterName, 'Do not compact after answering, even when over the threshold')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;append' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'The user (sender) the message belongs to')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The user (sender) the message belongs to')
            [CompletionResult]::new('--msg-id', '--msg-id', [CompletionResultType]::ParameterName, 'The platform''s message id (kept as `msgId`)')
            [CompletionResult]::new('--thread', '--thread', [CompletionResultType]::ParameterName, 'Thread id (kept as `threadId`)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Group id (kept as `groupId`)')
            [CompletionResult]::new('--attach', '--attach', [CompletionResultType]::ParameterName, 'A file sent with the message, as PATH or PATH:NAME; repeat for several')
            [CompletionResult]::new('--source', '--source', [CompletionResultType]::ParameterName, 'Platform name stored in the line''s `channel` field [default: --channel]')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Group or thread whose shared memory this message belongs to; --user stays the sender')
            [CompletionResult]::new('--display-name', '--display-name', [CompletionResultType]::ParameterName, 'The sender''s name: kept as `userName` in a conversation; on `ask`, names a new profile')
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Who spoke')
            [CompletionResult]::new('--ts', '--ts', [CompletionResultType]::ParameterName, 'Time of the message, RFC 3339 [default: now]')
            [CompletionResult]::new('--jsonl', '--jsonl', [CompletionResultType]::ParameterName, 'Import seed-format message lines from FILE (or - for stdin); all or nothing')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;context' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Whose memory')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Whose memory')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Number of recent messages [default: config stm.contextWindow]')
            [CompletionResult]::new('--window', '--window', [CompletionResultType]::ParameterName, 'Number of recent messages [default: config stm.contextWindow]')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Whose shared memory, for a group or thread (--user is then the sender)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'List each part, its size and estimated tokens, and what the size budget dropped or cut')
            [CompletionResult]::new('--show-config', '--show-config', [CompletionResultType]::ParameterName, 'Print the effective configuration (defaults merged with config.json) instead')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;compact' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Compact this user')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Compact this user')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Compact this group or thread conversation')
            [CompletionResult]::new('--claude-bin', '--claude-bin', [CompletionResultType]::ParameterName, 'The claude program [default: `claude` on PATH]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model for claude (passed as `--model`)')
            [CompletionResult]::new('--claude-arg', '--claude-arg', [CompletionResultType]::ParameterName, 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Compact every user over the threshold')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Compact even under the threshold (anything beyond the context window)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Say what would be compacted; change nothing, call nothing')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;maintain' {
            [CompletionResult]::new('--only', '--only', [CompletionResultType]::ParameterName, 'Run only these tasks (stm-expiry, log-rotation, compact, daily, weekly, prune)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'LLM calls run in parallel')
            [CompletionResult]::new('--max-llm-calls', '--max-llm-calls', [CompletionResultType]::ParameterName, 'At most N LLM calls this run; the rest waits for the next run')
            [CompletionResult]::new('--now', '--now', [CompletionResultType]::ParameterName, 'Pretend the time is this (RFC 3339), for catching up and tests')
            [CompletionResult]::new('--claude-bin', '--claude-bin', [CompletionResultType]::ParameterName, 'The claude program [default: `claude` on PATH]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model for claude (passed as `--model`)')
            [CompletionResult]::new('--claude-arg', '--claude-arg', [CompletionResultType]::ParameterName, 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'List every action; change nothing, call nothing')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Regenerate summaries that already exist')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Channel-wide or one user''s counts, storage and spend')
            [CompletionResult]::new('users', 'users', [CompletionResultType]::ParameterValue, 'One row per person (1:1 or in groups): messages, last activity, size, spend')
            [CompletionResult]::new('conversations', 'conversations', [CompletionResultType]::ParameterValue, 'One row per conversation (group or thread): messages, people, last activity, spend')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The conversation, readable')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Clear a user''s short-term memory, or with --all everything of the user')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Show, replace or edit a user''s profile')
            [CompletionResult]::new('topics', 'topics', [CompletionResultType]::ParameterValue, 'List topic notes')
            [CompletionResult]::new('topic', 'topic', [CompletionResultType]::ParameterValue, 'Show or set one topic note')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete a topic note')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Export everything of a user')
            [CompletionResult]::new('reindex', 'reindex', [CompletionResultType]::ParameterValue, 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;session;status' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Show this user only')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Show this user only')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;users' {
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order of the rows, largest or newest first')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N users')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;conversations' {
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order of the rows, largest or newest first')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N conversations')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;show' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Whose conversation')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Whose conversation')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'A group or thread conversation instead of a user''s')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Last N messages')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only messages on or after DATE (YYYY-MM-DD or RFC 3339)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--archive', '--archive', [CompletionResultType]::ParameterName, 'Include the gzip archives, oldest first')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;clear' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Whose memory')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Whose memory')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Everything: STM, profile, summaries, archive, index entry')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;profile' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Whose profile')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Whose profile')
            [CompletionResult]::new('--set', '--set', [CompletionResultType]::ParameterName, 'Replace it with FILE (or - for stdin)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--edit', '--edit', [CompletionResultType]::ParameterName, 'Open it in $VISUAL or $EDITOR')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;topics' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;topic' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a topic note')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Write a topic note from FILE (or - / nothing for stdin)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;session;topic;show' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;topic;set' {
            [CompletionResult]::new('--tags', '--tags', [CompletionResultType]::ParameterName, 'Tags, comma-separated')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;topic;help' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a topic note')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Write a topic note from FILE (or - / nothing for stdin)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;session;topic;help;show' {
            break
        }
        'claude-session;session;topic;help;set' {
            break
        }
        'claude-session;session;topic;help;help' {
            break
        }
        'claude-session;session;forget' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;search' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Only this person: their own memory, and what they said (or were answered) in groups')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Only this person: their own memory, and what they said (or were answered) in groups')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Only this group or thread conversation')
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Only messages of this role (leaves out summaries, profiles and topics)')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only what was said on or after this (YYYY-MM-DD, midnight UTC, or RFC 3339)')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only what was said before this; a bare YYYY-MM-DD includes that whole day')
            [CompletionResult]::new('--kind', '--kind', [CompletionResultType]::ParameterName, 'Only these kinds of file; comma-separated or repeated')
            [CompletionResult]::new('--tag', '--tag', [CompletionResultType]::ParameterName, 'Only profiles and topic notes with this tag; repeat for several')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Show at most N hits, the newest; 0 shows all')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Show at most N hits, the newest; 0 shows all')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('-e', '-e', [CompletionResultType]::ParameterName, 'QUERY is a regular expression (Rust regex syntax, case-insensitive)')
            [CompletionResult]::new('--regex', '--regex', [CompletionResultType]::ParameterName, 'QUERY is a regular expression (Rust regex syntax, case-insensitive)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;export' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'Whose data')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Whose data')
            [CompletionResult]::new('--out', '--out', [CompletionResultType]::ParameterName, 'Where to write it (must not exist yet, or be an empty folder)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'dir: the sessions layout; json: one document; tar.gz: the dir, packed')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;reindex' {
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;session;help' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Channel-wide or one user''s counts, storage and spend')
            [CompletionResult]::new('users', 'users', [CompletionResultType]::ParameterValue, 'One row per person (1:1 or in groups): messages, last activity, size, spend')
            [CompletionResult]::new('conversations', 'conversations', [CompletionResultType]::ParameterValue, 'One row per conversation (group or thread): messages, people, last activity, spend')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The conversation, readable')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Clear a user''s short-term memory, or with --all everything of the user')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Show, replace or edit a user''s profile')
            [CompletionResult]::new('topics', 'topics', [CompletionResultType]::ParameterValue, 'List topic notes')
            [CompletionResult]::new('topic', 'topic', [CompletionResultType]::ParameterValue, 'Show or set one topic note')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete a topic note')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Export everything of a user')
            [CompletionResult]::new('reindex', 'reindex', [CompletionResultType]::ParameterValue, 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;session;help;status' {
            break
        }
        'claude-session;session;help;users' {
            break
        }
        'claude-session;session;help;conversations' {
            break
        }
        'claude-session;session;help;show' {
            break
        }
        'claude-session;session;help;clear' {
            break
        }
        'claude-session;session;help;profile' {
            break
        }
        'claude-session;session;help;topics' {
            break
        }
        'claude-session;session;help;topic' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a topic note')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Write a topic note from FILE (or - / nothing for stdin)')
            break
        }
        'claude-session;session;help;topic;show' {
            break
        }
        'claude-session;session;help;topic;set' {
            break
        }
        'claude-session;session;help;forget' {
            break
        }
        'claude-session;session;help;search' {
            break
        }
        'claude-session;session;help;export' {
            break
        }
        'claude-session;session;help;reindex' {
            break
        }
        'claude-session;session;help;help' {
            break
        }
        'claude-session;doctor' {
            [CompletionResult]::new('--claude-bin', '--claude-bin', [CompletionResultType]::ParameterName, 'The claude program [default: `claude` on PATH]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds before claude is killed [default: config ask.timeoutSeconds, 300]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Model for claude (passed as `--model`)')
            [CompletionResult]::new('--claude-arg', '--claude-arg', [CompletionResultType]::ParameterName, 'Pass ARG through to claude; repeat for several (`--claude-arg --allowedTools --claude-arg Read`)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--live', '--live', [CompletionResultType]::ParameterName, 'Also make one minimal real call to claude (costs a few tokens)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;mcp' {
            [CompletionResult]::new('-u', '-u', [CompletionResultType]::ParameterName, 'The person whose memory the tools read')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'The person whose memory the tools read')
            [CompletionResult]::new('--conversation', '--conversation', [CompletionResultType]::ParameterName, 'Read this group or thread conversation instead (the person must have written in it)')
            [CompletionResult]::new('--state-dir', '--state-dir', [CompletionResultType]::ParameterName, 'The state dir that holds `sessions/` (the seed''s channel folder)')
            [CompletionResult]::new('--channel', '--channel', [CompletionResultType]::ParameterName, 'Use ./.claude/channels/NAME as the state dir (the seed''s default place)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print machine-readable JSON on stdout')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Say more on stderr; shows the cause chain of errors')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings, only errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'claude-session;help' {
            [CompletionResult]::new('ask', 'ask', [CompletionResultType]::ParameterValue, 'Log a message, answer it with `claude -p` and the user''s memory, print the reply')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Log one message (any role), for brokers that call claude themselves')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'Print the memory context block that `ask` would inject')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Summarise old messages of one user or all users now')
            [CompletionResult]::new('maintain', 'maintain', [CompletionResultType]::ParameterValue, 'One pass of every scheduled task (expiry, rotation, summaries, prune); for cron')
            [CompletionResult]::new('session', 'session', [CompletionResultType]::ParameterValue, 'Inspect and manage memory: status, users, show, clear, profile, topics, search, export')
            [CompletionResult]::new('doctor', 'doctor', [CompletionResultType]::ParameterValue, 'Check everything a broker needs before going live; say what to fix')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'A read-only MCP server on stdio over one person''s (or one conversation''s) memory')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'claude-session;help;ask' {
            break
        }
        'claude-session;help;append' {
            break
        }
        'claude-session;help;context' {
            break
        }
        'claude-session;help;compact' {
            break
        }
        'claude-session;help;maintain' {
            break
        }
        'claude-session;help;session' {
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Channel-wide or one user''s counts, storage and spend')
            [CompletionResult]::new('users', 'users', [CompletionResultType]::ParameterValue, 'One row per person (1:1 or in groups): messages, last activity, size, spend')
            [CompletionResult]::new('conversations', 'conversations', [CompletionResultType]::ParameterValue, 'One row per conversation (group or thread): messages, people, last activity, spend')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'The conversation, readable')
            [CompletionResult]::new('clear', 'clear', [CompletionResultType]::ParameterValue, 'Clear a user''s short-term memory, or with --all everything of the user')
            [CompletionResult]::new('profile', 'profile', [CompletionResultType]::ParameterValue, 'Show, replace or edit a user''s profile')
            [CompletionResult]::new('topics', 'topics', [CompletionResultType]::ParameterValue, 'List topic notes')
            [CompletionResult]::new('topic', 'topic', [CompletionResultType]::ParameterValue, 'Show or set one topic note')
            [CompletionResult]::new('forget', 'forget', [CompletionResultType]::ParameterValue, 'Delete a topic note')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find anything anyone said: messages (short-term and archived), summaries, profiles, topics')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Export everything of a user')
            [CompletionResult]::new('reindex', 'reindex', [CompletionResultType]::ParameterValue, 'Rebuild ltm/index.json, and the record of who wrote in which group, from the files')
            break
        }
        'claude-session;help;session;status' {
            break
        }
        'claude-session;help;session;users' {
            break
        }
        'claude-session;help;session;conversations' {
            break
        }
        'claude-session;help;session;show' {
            break
        }
        'claude-session;help;session;clear' {
            break
        }
        'claude-session;help;session;profile' {
            break
        }
        'claude-session;help;session;topics' {
            break
        }
        'claude-session;help;session;topic' {
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a topic note')
            [CompletionResult]::new('set', 'set', [CompletionResultType]::ParameterValue, 'Write a topic note from FILE (or - / nothing for stdin)')
            break
        }
        'claude-session;help;session;topic;show' {
            break
        }
        'claude-session;help;session;topic;set' {
            break
        }
        'claude-session;help;session;forget' {
            break
        }
        'claude-session;help;session;search' {
            break
        }
        'claude-session;help;session;export' {
            break
        }
        'claude-session;help;session;reindex' {
            break
        }
        'claude-session;help;doctor' {
            break
        }
        'claude-session;help;mcp' {
            break
        }
        'claude-session;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
