#!/usr/bin/env python3
"""A loopback stand-in for the Anthropic Messages API, for running the real
Claude Code CLI in tests and benchmarks without a network or a key.

    python3 tests/mock-messages-api.py DIR

Binds 127.0.0.1 on a free port and writes it to DIR/port (atomically, once
it listens); point claude at it with ANTHROPIC_BASE_URL=http://127.0.0.1:PORT.
Stops when DIR/stop appears or on SIGTERM.

Scripting: each request to POST /v1/messages takes the first file (by name)
in DIR/queue/ and deletes it; with the queue empty it answers
DIR/default.json if present, else the text "mock reply". A file holds one
JSON object, the response:

    {"text": "hello"}                       a text reply
    {"json": {...}}                         a text reply holding that JSON
    {"tool_use": {"name": "Read", "input": {"file_path": "/x"}}}
                                            a tool call (stop_reason tool_use)
    {"status": 529, "error": "Overloaded", "retry_after": 1}
                                            an HTTP error with an API error body
    {"sleep": 5}                            wait before answering (with any kind)
    {"chunk_delay": 0.2}                    seconds between SSE events
    {"drop_after": 3}                       close the connection after 3 SSE
                                            events (0: before any byte)
    {"usage": {"input_tokens": 10, "output_tokens": 5}}
    {"match": "text"}                       only for a request whose body
                                            contains this text; the first
                                            matching file in the queue wins

A request that asks for `"stream": true` gets an SSE stream, any other a
JSON message. Every request is recorded: DIR/requests/NNNN.json (the body
as sent) and a line in DIR/requests.jsonl ({"n", "method", "path",
"bytes", "stream", "model", "headers"}). Other paths (count_tokens, …) get
a small valid answer and are recorded too.
"""

import json
import os
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
LOCK = threading.Lock()
COUNT = [0]


def take_response(body_text):
    """The scripted response for this request (queue, then default)."""
    queue = os.path.join(DIR, "queue")
    with LOCK:
        names = sorted(os.listdir(queue)) if os.path.isdir(queue) else []
        for name in names:
            path = os.path.join(queue, name)
            try:
                with open(path) as f:
                    spec = json.load(f)
            except (OSError, ValueError):
                continue
            match = spec.get("match")
            if match is not None and match not in body_text:
                continue
            os.remove(path)
            return spec
    default = os.path.join(DIR, "default.json")
    if os.path.exists(default):
        with open(default) as f:
            return json.load(f)
    return {"text": "mock reply"}


def record(handler, body):
    with LOCK:
        COUNT[0] += 1
        n = COUNT[0]
    requests = os.path.join(DIR, "requests")
    os.makedirs(requests, exist_ok=True)
    with open(os.path.join(requests, "%04d.json" % n), "wb") as f:
        f.write(body)
    try:
        parsed = json.loads(body) if body else {}
    except ValueError:
        parsed = {}
    keep = ("x-api-key", "authorization", "anthropic-beta", "user-agent")
    line = {
        "n": n,
        "method": handler.command,
        "path": handler.path,
        "bytes": len(body),
        "stream": bool(isinstance(parsed, dict) and parsed.get("stream")),
        "model": parsed.get("model") if isinstance(parsed, dict) else None,
        "headers": {k: v for k, v in handler.headers.items() if k.lower() in keep},
    }
    with LOCK:
        with open(os.path.join(DIR, "requests.jsonl"), "a") as f:
            f.write(json.dumps(line) + "\n")
    return parsed


def content_blocks(spec):
    if "tool_use" in spec:
        tool = spec["tool_use"]
        block = {
            "type": "tool_use",
            "id": tool.get("id", "toolu_mock_%d" % COUNT[0]),
            "name": tool["name"],
            "input": tool.get("input", {}),
        }
        return [block], "tool_use"
    if "json" in spec:
        return [{"type": "text", "text": json.dumps(spec["json"])}], "end_turn"
    return [{"type": "text", "text": spec.get("text", "mock reply")}], "end_turn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def send_json(self, status, value, extra=()):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_mock_%d" % COUNT[0])
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        record(self, b"")
        self.send_json(200, {"data": [], "has_more": False})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body = self.body()
        request = record(self, body)
        path = self.path.split("?")[0]
        if not path.endswith("/v1/messages"):
            if path.endswith("/count_tokens"):
                self.send_json(200, {"input_tokens": len(body) // 4})
            else:
                self.send_json(200, {})
            return
        spec = take_response(body.decode("utf-8", "replace"))
        if spec.get("sleep"):
            time.sleep(float(spec["sleep"]))
        if "status" in spec:
            status = int(spec["status"])
            kinds = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error",
                     400: "invalid_request_error"}
            error = {"type": "error", "error": {
                "type": kinds.get(status, "api_error"),
                "message": spec.get("error", "mock error %d" % status)}}
            extra = []
            if "retry_after" in spec:
                extra.append(("retry-after", str(spec["retry_after"])))
            self.send_json(status, error, extra)
            return
        if spec.get("drop_after") == 0:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        blocks, stop = content_blocks(spec)
        usage = {"input_tokens": 100, "output_tokens": 20,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        usage.update(spec.get("usage", {}))
        model = request.get("model") or "claude-mock"
        message = {"id": "msg_mock_%d" % COUNT[0], "type": "message", "role": "assistant",
                   "model": model, "content": blocks, "stop_reason": stop,
                   "stop_sequence": None, "usage": usage}
        if not request.get("stream"):
            self.send_json(200, message)
            return
        self.stream(message, blocks, stop, usage, spec)

    def stream(self, message, blocks, stop, usage, spec):
        events = []
        start = dict(message, content=[], stop_reason=None,
                     usage=dict(usage, output_tokens=1))
        events.append(("message_start", {"type": "message_start", "message": start}))
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                               "content_block": {"type": "text", "text": ""}}))
                text = block["text"]
                pieces = [text[j:j + 16] for j in range(0, len(text), 16)] or [""]
                for piece in pieces:
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                                   "delta": {"type": "text_delta", "text": piece}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": i,
                               "content_block": dict(block, input={})}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                               "delta": {"type": "input_json_delta",
                                         "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(("message_delta", {"type": "message_delta",
                       "delta": {"stop_reason": stop, "stop_sequence": None},
                       "usage": {"output_tokens": usage["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))

        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_mock_%d" % COUNT[0])
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        delay = float(spec.get("chunk_delay", 0))
        drop_after = spec.get("drop_after")
        for n, (name, data) in enumerate(events):
            if drop_after is not None and n >= int(drop_after):
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()
            if delay:
                time.sleep(delay)


def main():
    os.makedirs(DIR, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_file = os.path.join(DIR, "port")
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))

    def watch():
        stop = os.path.join(DIR, "stop")
        parent = os.getppid()
        while not os.path.exists(stop) and os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
