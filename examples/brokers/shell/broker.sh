#!/bin/sh
# A Slack and LINE broker on claude-session, in POSIX sh with jq. One
# `claude-session ask --json` per message, the text on stdin (never in argv:
# an argument shows in `ps` to every process on the host).
#
#   sh broker.sh slack|line EVENTS.jsonl
#
# EVENTS.jsonl stands in for the platform (see ../events/): one Slack
# message event, or one LINE webhook body, per line. What the broker would
# send to the platform is printed on stdout, one JSON object per call; its
# log goes to stderr. Replace send() with your platform's API call.
#
# Environment: CLAUDE_SESSION (the program, default `claude-session` on
# PATH), SLACK_STATE_DIR / LINE_STATE_DIR (the state dir; default:
# claude-session's own), RETRY_DELAY_MS (before requeued messages are tried
# again, default 5000), and what claude-session and claude read (CLAUDE_BIN,
# ANTHROPIC_API_KEY, ...).
set -eu

kind=${1:-}
events=${2:-}
case $kind in
  slack) state_dir=${SLACK_STATE_DIR:-} ;;
  line) state_dir=${LINE_STATE_DIR:-} ;;
  *) echo "usage: sh broker.sh slack|line EVENTS.jsonl" >&2; exit 2 ;;
esac
claude_session=${CLAUDE_SESSION:-claude-session}
max_attempts=3
sorry="Sorry, something went wrong."
files=$(cd "$(dirname "$events")" && pwd)/files
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log() { printf '[broker] %s\n' "$*" >&2; }

# send JQ-FILTER ARGS...: print one platform call, built by jq.
send() { filter=$1; shift; jq -nc "$@" "$filter"; }

# ask ARGS... < TEXT: sets $code, $reply and $error (in this shell: never
# run it as the end of a pipeline, which may be a subshell).
# Exit 0 and 7 (the budget note) carry a reply to post; 75 means "deliver
# again later, same --msg-id"; anything else is a failure.
ask() {
  set -- ask --json "$@"
  [ -n "$state_dir" ] && set -- --state-dir "$state_dir" "$@"
  code=0
  out=$("$claude_session" "$@" 2>"$work/stderr") || code=$?
  reply=$(printf '%s' "$out" | jq -r '.reply // empty' 2>/dev/null || true)
  error=$(cat "$work/stderr")
}

# slack EVENT ATTEMPTS: one message event; returns 75 to requeue it.
slack() {
  event=$1
  # Skip joins, edits, bots: only people's messages.
  [ "$(printf '%s' "$event" | jq -r '.type == "message" and (.subtype == null) and (.bot_id == null) and (.user != null)')" = true ] || return 0
  get() { printf '%s' "$event" | jq -r "$1"; }
  channel=$(get .channel)
  ts=$(get .ts)
  thread=$(get '.thread_ts // .ts')
  set -- --source slack --user "$(get .user)" --msg-id "$ts"
  # DMs ("im") are the sender's own memory; public and private channels and
  # group DMs share the channel's.
  case $(get .channel_type) in
    channel|group|mpim) set -- "$@" --conversation "$channel" ;;
  esac
  [ "$thread" != "$ts" ] && set -- "$@" --thread "$thread"
  # A real broker downloads url_private with the bot token into its inbox;
  # the stand-in's files lie next to the events.
  # The saved file's place comes from the platform (url_private; the
  # stand-in's lie in files/), never from the name a person gave it: the
  # name goes only after the last colon. One file a line, no splitting.
  tab=$(printf '\t')
  while IFS=$tab read -r url name; do
    [ -n "$url" ] && set -- "$@" --attach "$files/${url#files/}:$name"
  done <<FILES
$(get '.files[]? | [.url_private, .name] | @tsv')
FILES
  printf '%s' "$event" | jq -j '.text // "" | if . == "" then "(sent a file)" else . end' > "$work/text"
  ask "$@" < "$work/text"
  [ "$code" = 75 ] && return 75
  case $code in
    0|7) ;;
    *) log "ask exited $code: $error"; reply=$sorry ;;
  esac
  send '{method: "chat.postMessage", channel: $c, thread_ts: $t, text: $x}' \
    --arg c "$channel" --arg t "$thread" --arg x "$reply"
}

# line EVENT ATTEMPTS: one webhook event; returns 75 to requeue it.
line() {
  event=$1
  attempts=$2
  get() { printf '%s' "$event" | jq -r "$1"; }
  case $(get .type) in
    unsend)
      # The sender took a message back: it and its reply leave memory (the
      # log and its archives); one already gone is exit 0, deleted: false.
      id=$(get '.unsend.messageId // empty')
      user=$(get '.source.userId // empty')
      [ -n "$id" ] && [ -n "$user" ] || return 0
      group=$(get '.source.groupId // .source.roomId // empty')
      set -- session delete --json --user "$user" --msg-id "$id"
      [ -n "$group" ] && set -- "$@" --conversation "$group"
      [ -n "$state_dir" ] && set -- --state-dir "$state_dir" "$@"
      code=0
      out=$("$claude_session" "$@" 2>"$work/stderr" </dev/null) || code=$?
      if [ "$code" != 0 ]; then
        log "unsend of $id: session delete exited $code: $(cat "$work/stderr")"
      elif [ "$(printf '%s' "$out" | jq -r .deleted)" = true ]; then
        log "unsend of $id: deleted"
      else
        log "unsend of $id: already gone"
      fi
      return 0 ;;
    message) ;;
    *) return 0 ;;
  esac
  user=$(get '.source.userId // empty')
  [ -n "$user" ] || return 0
  group=$(get '.source.groupId // .source.roomId // empty')
  set -- --source line --user "$user" --msg-id "$(get .message.id)"
  # A DM is the sender's memory; a group or room shares the group's.
  [ -n "$group" ] && set -- "$@" --conversation "$group"
  case $(get .message.type) in
    text) text=$(printf '%s' "$event" | jq -j .message.text) ;;
    image|file)
      name=$(get '.message.fileName // (.message.id + ".jpg")')
      set -- "$@" --attach "$files/$name:$name"
      text="(sent a photo)"
      [ "$(get .message.type)" = file ] && text="(sent a file)" ;;
    *) return 0 ;;  # stickers and the like
  esac
  printf '%s' "$text" > "$work/text"
  ask "$@" < "$work/text"
  [ "$code" = 75 ] && return 75
  case $code in
    0|7) ;;
    *) log "ask exited $code: $error"; reply=$sorry ;;
  esac
  # LINE cannot edit a message, and a reply token is good once and for a
  # short while: a retry pushes.
  if [ "$attempts" = 0 ]; then
    send '{method: "reply", replyToken: $r, messages: [{type: "text", text: $x}]}' \
      --arg r "$(get .replyToken)" --arg x "$reply"
  else
    send '{method: "push", to: $t, messages: [{type: "text", text: $x}]}' \
      --arg t "${group:-$user}" --arg x "$reply"
  fi
}

# The queue: one `ATTEMPTS<TAB>EVENT` line each. Exit 75 (a rate limit,
# overload, the network) requeues the message for the next round: it is
# tried again with the same --msg-id, so it is logged once and answered
# once. (A Slack poller must not advance its cursor past it.)
if [ "$kind" = line ]; then filter='.events[]'; else filter='.'; fi
jq -c "$filter" "$events" | sed 's/^/0	/' > "$work/queue"
while [ -s "$work/queue" ]; do
  : > "$work/retry"
  while IFS='	' read -r attempts event; do
    status=0
    "$kind" "$event" "$attempts" < /dev/null || status=$?
    if [ "$status" = 75 ]; then
      attempts=$((attempts + 1))
      if [ "$attempts" -lt "$max_attempts" ]; then
        log "claude unavailable for now: requeued (attempt $((attempts + 1)) of $max_attempts)"
        printf '%s\t%s\n' "$attempts" "$event" >> "$work/retry"
      else
        log "claude unavailable: gave up after $max_attempts attempts"
      fi
    elif [ "$status" != 0 ]; then
      exit "$status"
    fi
  done < "$work/queue"
  mv "$work/retry" "$work/queue"
  if [ -s "$work/queue" ]; then
    sleep "$(awk -v ms="${RETRY_DELAY_MS:-5000}" 'BEGIN { print ms / 1000 }')"
  fi
done
