#!/usr/bin/env node
// A Slack and LINE broker on claude-session: plain JavaScript on Node's
// child_process.spawn (Node 18 or newer, no packages). The reply is read
// from stdout as claude writes it (`ask --stream --json`), so a Slack
// message grows in place; the message text goes on stdin, never in argv.
//
//   node broker.js slack|line EVENTS.jsonl
//
// EVENTS.jsonl stands in for the platform (see ../events/): one Slack
// message event, or one LINE webhook body, per line. What the broker would
// send to the platform is printed on stdout, one JSON object per call
// (chat.postMessage / chat.update, LINE reply / push); its log goes to
// stderr. Replace `platform` below with your Slack or LINE client.
//
// Environment: CLAUDE_SESSION (the program, default `claude-session` on
// PATH), SLACK_STATE_DIR / LINE_STATE_DIR (the state dir, as the seed's
// brokers name it; default: claude-session's own), RETRY_DELAY_MS (before a
// requeued message is tried again, default 5000), and what claude-session
// and claude read (CLAUDE_BIN, ANTHROPIC_API_KEY, ...).
"use strict";

const { spawn } = require("node:child_process");
const readline = require("node:readline");
const fs = require("node:fs");
const path = require("node:path");

const CLAUDE_SESSION = process.env.CLAUDE_SESSION || "claude-session";
const RETRY_DELAY_MS = Number(process.env.RETRY_DELAY_MS ?? 5000);
const MAX_ATTEMPTS = 3;
const EDIT_INTERVAL_MS = 500; // platforms rate-limit edits
const SORRY = "Sorry, something went wrong.";

const log = (...words) => console.error("[broker]", ...words);

// ── claude-session ask ─────────────────────────────────────
// `args` are ids and flags; `text` goes on stdin. `onText(soFar)` is called
// as the reply grows. Resolves to { code, reply, error }: exit 0 and 7 (the
// budget note) carry a reply to post; 75 means "deliver again later, same
// --msg-id"; anything else is a failure, `error` says which.
function ask(stateDir, args, text, onText) {
  const global = stateDir ? ["--state-dir", stateDir] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE_SESSION, [...global, "ask", "--stream", "--json", ...args], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let soFar = "";
    let reply = null;
    let error = null;
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const event = JSON.parse(line);
      if (event.type === "delta") {
        soFar += event.text;
        onText(soFar);
      } else if (event.type === "done") {
        reply = event.reply;
      } else if (event.type === "error") {
        error = event.message;
      }
    });
    child.on("error", reject); // claude-session itself not found
    child.on("close", (code) => resolve({ code, reply, error: error ?? stderr.trim() }));
    child.stdin.on("error", () => {}); // it exited before reading (a usage error)
    child.stdin.end(text);
  });
}

// ── claude-session session delete ──────────────────────────
// LINE's unsend: the message and the reply that answers it leave memory
// (the log and its archives). Resolves to { code, report, error }; a
// message already gone is exit 0 too, with `deleted: false`.
function deleteMessage(stateDir, args) {
  const global = stateDir ? ["--state-dir", stateDir] : [];
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE_SESSION, [...global, "session", "delete", "--json", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code, report: code === 0 ? JSON.parse(stdout) : null, error: stderr.trim() }),
    );
  });
}

// ── The platform (here: printed) ───────────────────────────
let posted = 0;
const platform = {
  send(call) {
    process.stdout.write(JSON.stringify(call) + "\n");
  },
  slackPost(channel, thread_ts, text) {
    const ts = `posted.${++posted}`;
    this.send({ method: "chat.postMessage", channel, thread_ts, text, ts });
    return ts;
  },
  slackUpdate(channel, ts, text) {
    this.send({ method: "chat.update", channel, ts, text });
  },
  lineReply(replyToken, text) {
    this.send({ method: "reply", replyToken, messages: [{ type: "text", text }] });
  },
  linePush(to, text) {
    this.send({ method: "push", to, messages: [{ type: "text", text }] });
  },
  // A real broker downloads the file (Slack: url_private with the bot
  // token; LINE: /v2/bot/message/{id}/content) into its inbox folder; the
  // stand-in's files lie next to the events.
  download(events, name) {
    return path.resolve(path.dirname(events), name);
  },
};

// ── Slack ──────────────────────────────────────────────────
// One message event: DMs (channel_type "im") are the sender's own memory;
// public and private channels and group DMs ("channel", "group", "mpim")
// share the channel's. Returns "done" or "retry".
async function slackMessage(msg, item, events) {
  if (msg.type !== "message" || msg.subtype || msg.bot_id || !msg.user) return "done";
  const args = ["--source", "slack", "--user", msg.user, "--msg-id", msg.ts];
  if (["channel", "group", "mpim"].includes(msg.channel_type)) {
    args.push("--conversation", msg.channel);
  }
  if (msg.thread_ts && msg.thread_ts !== msg.ts) args.push("--thread", msg.thread_ts);
  for (const file of msg.files ?? []) {
    args.push("--attach", `${platform.download(events, file.url_private)}:${file.name}`);
  }
  const text = msg.text || "(sent a file)";
  const thread = msg.thread_ts ?? msg.ts;

  // Post the first piece, then edit as the reply grows.
  let shown = "";
  let lastEdit = 0;
  const onText = (soFar) => {
    if (!item.messageTs) {
      item.messageTs = platform.slackPost(msg.channel, thread, soFar);
    } else if (Date.now() - lastEdit < EDIT_INTERVAL_MS) {
      return;
    } else {
      platform.slackUpdate(msg.channel, item.messageTs, soFar);
    }
    shown = soFar;
    lastEdit = Date.now();
  };
  const { code, reply, error } = await ask(process.env.SLACK_STATE_DIR, args, text, onText);
  if (code === 75) return "retry"; // claude unavailable for now: the message stays unanswered
  if (code !== 0 && code !== 7) log(`ask exited ${code}: ${error}`);
  const final = code === 0 || code === 7 ? reply : SORRY;
  if (!item.messageTs) platform.slackPost(msg.channel, thread, final);
  else if (final !== shown) platform.slackUpdate(msg.channel, item.messageTs, final);
  return "done";
}

// ── LINE ───────────────────────────────────────────────────
// One webhook event: a DM is the sender's memory; a group or room shares
// the group's. LINE cannot edit a message, so the reply is sent whole.
async function lineEvent(event, item, events) {
  if (event.type === "unsend") {
    // The sender took a message back: it and its reply leave memory.
    const id = event.unsend?.messageId;
    if (!id || !event.source?.userId) return "done";
    const args = ["--user", event.source.userId, "--msg-id", id];
    const group = event.source.groupId ?? event.source.roomId;
    if (group) args.push("--conversation", group);
    const { code, report, error } = await deleteMessage(process.env.LINE_STATE_DIR, args);
    if (code !== 0) log(`unsend of ${id}: session delete exited ${code}: ${error}`);
    else log(`unsend of ${id}: ${report.deleted ? "deleted" : "already gone"}`);
    return "done";
  }
  if (event.type !== "message" || !event.source?.userId) return "done";
  const message = event.message;
  const args = ["--source", "line", "--user", event.source.userId, "--msg-id", message.id];
  const group = event.source.groupId ?? event.source.roomId;
  if (group) args.push("--conversation", group);
  let text = message.text;
  if (message.type === "image" || message.type === "file") {
    const name = message.fileName ?? `${message.id}.jpg`;
    args.push("--attach", `${platform.download(events, `files/${name}`)}:${name}`);
    text = message.type === "image" ? "(sent a photo)" : "(sent a file)";
  } else if (message.type !== "text") {
    return "done"; // stickers and the like
  }
  const { code, reply, error } = await ask(process.env.LINE_STATE_DIR, args, text, () => {});
  if (code === 75) return "retry";
  if (code !== 0 && code !== 7) log(`ask exited ${code}: ${error}`);
  const final = code === 0 || code === 7 ? reply : SORRY;
  // A reply token is good once and for a short while: a retry pushes.
  if (item.attempts === 0) platform.lineReply(event.replyToken, final);
  else platform.linePush(group ?? event.source.userId, final);
  return "done";
}

// ── The queue ──────────────────────────────────────────────
// Exit 75 (a rate limit, overload, the network) requeues the message: it is
// tried again later with the same --msg-id, so it is logged once and
// answered once. (A Slack poller must not advance its cursor past it.)
async function main() {
  const [kind, events] = process.argv.slice(2);
  if (!["slack", "line"].includes(kind) || !events) {
    console.error("usage: node broker.js slack|line EVENTS.jsonl");
    process.exit(2);
  }
  const lines = fs.readFileSync(events, "utf8").split("\n").filter((l) => l.trim());
  const queue = lines
    .flatMap((line) => (kind === "line" ? JSON.parse(line).events : [JSON.parse(line)]))
    .map((event) => ({ event, attempts: 0, messageTs: null }));
  const handle = kind === "slack" ? slackMessage : lineEvent;
  while (queue.length > 0) {
    const item = queue.shift();
    if ((await handle(item.event, item, events)) === "retry") {
      item.attempts += 1;
      if (item.attempts < MAX_ATTEMPTS) {
        log(`claude unavailable for now: requeued (attempt ${item.attempts + 1} of ${MAX_ATTEMPTS})`);
        queue.push(item);
        await new Promise((resume) => setTimeout(resume, RETRY_DELAY_MS));
      } else {
        log("claude unavailable: gave up after", MAX_ATTEMPTS, "attempts");
      }
    }
  }
}

main().catch((e) => {
  log(e.stack ?? e);
  process.exit(1);
});
