#!/usr/bin/env python3
"""A Slack and LINE broker on claude-session, in Python (3.8+, standard
library only). The reply is read from stdout as claude writes it (`ask
--stream --json`), so a Slack message grows in place; the message text goes
on stdin, never in argv.

    python3 broker.py slack|line EVENTS.jsonl

EVENTS.jsonl stands in for the platform (see ../events/): one Slack message
event, or one LINE webhook body, per line. What the broker would send to the
platform is printed on stdout, one JSON object per call; its log goes to
stderr. Replace `Platform` with your Slack or LINE client.

Environment: CLAUDE_SESSION (the program, default `claude-session` on PATH),
SLACK_STATE_DIR / LINE_STATE_DIR (the state dir; default: claude-session's
own), RETRY_DELAY_MS (before a requeued message is tried again, default
5000), and what claude-session and claude read (CLAUDE_BIN, ANTHROPIC_API_KEY).
"""

import collections
import json
import os
import subprocess
import sys
import time

CLAUDE_SESSION = os.environ.get("CLAUDE_SESSION") or "claude-session"
RETRY_DELAY = int(os.environ.get("RETRY_DELAY_MS", "5000")) / 1000
MAX_ATTEMPTS = 3
EDIT_INTERVAL = 0.5  # platforms rate-limit edits
SORRY = "Sorry, something went wrong."


def log(*words):
    print("[broker]", *words, file=sys.stderr, flush=True)


def ask(state_dir, args, text, on_text):
    """`claude-session ask --stream --json ARGS` with TEXT on stdin.

    on_text(so_far) is called as the reply grows. Returns (code, reply,
    error): exit 0 and 7 (the budget note) carry a reply to post; 75 means
    "deliver again later, same --msg-id"; anything else is a failure.
    """
    flags = ["--state-dir", state_dir] if state_dir else []
    proc = subprocess.Popen(
        [CLAUDE_SESSION, *flags, "ask", "--stream", "--json", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, encoding="utf-8",
    )
    try:
        proc.stdin.write(text)
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it exited before reading (a usage error)
    so_far, reply, error = "", None, None
    for line in proc.stdout:
        event = json.loads(line)
        if event["type"] == "delta":
            so_far += event["text"]
            on_text(so_far)
        elif event["type"] == "done":
            reply = event["reply"]
        elif event["type"] == "error":
            error = event["message"]
    stderr = proc.stderr.read()
    return proc.wait(), reply, error or stderr.strip()


def delete_message(state_dir, args):
    """`claude-session session delete --json ARGS`: LINE's unsend.

    The message and the reply that answers it leave memory (the log and
    its archives). Returns (code, report, error); a message already gone
    is exit 0 too, with "deleted": false.
    """
    flags = ["--state-dir", state_dir] if state_dir else []
    proc = subprocess.run(
        [CLAUDE_SESSION, *flags, "session", "delete", "--json", *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, encoding="utf-8",
    )
    report = json.loads(proc.stdout) if proc.returncode == 0 else None
    return proc.returncode, report, proc.stderr.strip()


class Platform:
    """The platform's API, here printed."""

    def __init__(self, events):
        self.events = events
        self.posted = 0

    def send(self, **call):
        print(json.dumps(call, ensure_ascii=False), flush=True)

    def slack_post(self, channel, thread_ts, text):
        self.posted += 1
        ts = f"posted.{self.posted}"
        self.send(method="chat.postMessage", channel=channel, thread_ts=thread_ts, text=text, ts=ts)
        return ts

    def slack_update(self, channel, ts, text):
        self.send(method="chat.update", channel=channel, ts=ts, text=text)

    def line_reply(self, reply_token, text):
        self.send(method="reply", replyToken=reply_token, messages=[{"type": "text", "text": text}])

    def line_push(self, to, text):
        self.send(method="push", to=to, messages=[{"type": "text", "text": text}])

    def download(self, name):
        # A real broker downloads the file (Slack: url_private with the bot
        # token; LINE: /v2/bot/message/{id}/content) into its inbox folder;
        # the stand-in's files lie next to the events.
        return os.path.join(os.path.dirname(os.path.abspath(self.events)), name)


def slack_message(platform, msg, item):
    """One message event; returns "done" or "retry"."""
    if msg.get("type") != "message" or msg.get("subtype") or msg.get("bot_id") or not msg.get("user"):
        return "done"
    args = ["--source", "slack", "--user", msg["user"], "--msg-id", msg["ts"]]
    # DMs ("im") are the sender's own memory; public and private channels
    # and group DMs share the channel's.
    if msg.get("channel_type") in ("channel", "group", "mpim"):
        args += ["--conversation", msg["channel"]]
    if msg.get("thread_ts") and msg["thread_ts"] != msg["ts"]:
        args += ["--thread", msg["thread_ts"]]
    for f in msg.get("files", []):
        args += ["--attach", f"{platform.download(f['url_private'])}:{f['name']}"]
    text = msg.get("text") or "(sent a file)"
    thread = msg.get("thread_ts") or msg["ts"]
    state = {"shown": "", "last_edit": 0.0}

    def on_text(so_far):
        # Post the first piece, then edit as the reply grows.
        if item["message_ts"] is None:
            item["message_ts"] = platform.slack_post(msg["channel"], thread, so_far)
        elif time.monotonic() - state["last_edit"] < EDIT_INTERVAL:
            return
        else:
            platform.slack_update(msg["channel"], item["message_ts"], so_far)
        state["shown"], state["last_edit"] = so_far, time.monotonic()

    code, reply, error = ask(os.environ.get("SLACK_STATE_DIR"), args, text, on_text)
    if code == 75:
        return "retry"  # claude unavailable for now: the message stays unanswered
    if code not in (0, 7):
        log(f"ask exited {code}: {error}")
    final = reply if code in (0, 7) else SORRY
    if item["message_ts"] is None:
        platform.slack_post(msg["channel"], thread, final)
    elif final != state["shown"]:
        platform.slack_update(msg["channel"], item["message_ts"], final)
    return "done"


def line_event(platform, event, item):
    """One webhook event; returns "done" or "retry"."""
    source = event.get("source", {})
    if event.get("type") == "unsend":
        # The sender took a message back: it and its reply leave memory.
        msg_id = event.get("unsend", {}).get("messageId")
        if not msg_id or not source.get("userId"):
            return "done"
        args = ["--user", source["userId"], "--msg-id", msg_id]
        group = source.get("groupId") or source.get("roomId")
        if group:
            args += ["--conversation", group]
        code, report, error = delete_message(os.environ.get("LINE_STATE_DIR"), args)
        if code != 0:
            log(f"unsend of {msg_id}: session delete exited {code}: {error}")
        else:
            log(f"unsend of {msg_id}: {'deleted' if report['deleted'] else 'already gone'}")
        return "done"
    if event.get("type") != "message" or not source.get("userId"):
        return "done"
    message = event["message"]
    args = ["--source", "line", "--user", source["userId"], "--msg-id", message["id"]]
    # A DM is the sender's memory; a group or room shares the group's.
    group = source.get("groupId") or source.get("roomId")
    if group:
        args += ["--conversation", group]
    text = message.get("text")
    if message["type"] in ("image", "file"):
        name = message.get("fileName") or f"{message['id']}.jpg"
        args += ["--attach", f"{platform.download('files/' + name)}:{name}"]
        text = "(sent a photo)" if message["type"] == "image" else "(sent a file)"
    elif message["type"] != "text":
        return "done"  # stickers and the like
    code, reply, error = ask(os.environ.get("LINE_STATE_DIR"), args, text, lambda _: None)
    if code == 75:
        return "retry"
    if code not in (0, 7):
        log(f"ask exited {code}: {error}")
    final = reply if code in (0, 7) else SORRY
    # LINE cannot edit a message, and a reply token is good once and for a
    # short while: a retry pushes.
    if item["attempts"] == 0:
        platform.line_reply(event["replyToken"], final)
    else:
        platform.line_push(group or source["userId"], final)
    return "done"


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("slack", "line"):
        sys.exit("usage: python3 broker.py slack|line EVENTS.jsonl")
    kind, events = sys.argv[1], sys.argv[2]
    platform = Platform(events)
    queue = collections.deque()
    with open(events, encoding="utf-8") as lines:
        for line in filter(str.strip, lines):
            body = json.loads(line)
            for event in body["events"] if kind == "line" else [body]:
                queue.append({"event": event, "attempts": 0, "message_ts": None})
    handle = slack_message if kind == "slack" else line_event
    # Exit 75 (a rate limit, overload, the network) requeues the message: it
    # is tried again later with the same --msg-id, so it is logged once and
    # answered once. (A Slack poller must not advance its cursor past it.)
    while queue:
        item = queue.popleft()
        if handle(platform, item["event"], item) == "retry":
            item["attempts"] += 1
            if item["attempts"] < MAX_ATTEMPTS:
                log(f"claude unavailable for now: requeued (attempt {item['attempts'] + 1} of {MAX_ATTEMPTS})")
                queue.append(item)
                time.sleep(RETRY_DELAY)
            else:
                log(f"claude unavailable: gave up after {MAX_ATTEMPTS} attempts")


if __name__ == "__main__":
    main()
