#!/usr/bin/env python3
"""fake_openai.py - a TEST DOUBLE of an OpenAI-compatible chat completions endpoint.

It is not a model and judges nothing: it plays a script, so prover's LLM judge
(judge/llm_judge.h) can be tested and demonstrated without one. Python standard library only.

    tests/judge/fake_openai.py [--port N] [--port-file FILE] [--script STEPS]
                               [--answers FILE] [--group-scripts FILE] [--log FILE]
                               [--fail-first N]
                               [--require-key KEY]

It serves POST /v1/chat/completions (and /chat/completions) in the shape of OpenAI's API:
`messages`, `tools` / `tool_calls`, `tool` messages, `response_format`, `usage`. It checks
the request the way a strict server does (400 with an OpenAI-style error): `model` and
`messages` present, every `tool` message answers a `tool_calls` id of an earlier assistant
message, a `response_format` of type json_schema carries json_schema.schema.

The script: a comma-separated list of steps. A conversation's turn k (k = the number of
assistant messages already in the request) plays step k; the last step repeats. A directive
`fake-script: STEPS` anywhere in the first user message (e.g. in the task text) overrides
--script for that conversation, so one server can play different scripts per group.
Steps:
  oracle         the group's segment: from --answers (a JSON object keyed by the group id,
                 "Group N." in the prompt, values with start_turn/end_turn and optionally
                 failure_mode/actions), else the first allowed turn of the success shown in
                 the prompt; actions are read from the prompt's "turn t: action" lines
  malformed      content that is not JSON
  out_of_bounds  the oracle's answer with end_turn past the end of the trajectory
  terminal       a segment that ends at the last turn
  wrong_actions  the oracle's turns with action texts that are not the trajectory's
  search         a tool call: search_trajectory(query = words of the success's first
                 action, k = 3)
  segment        a tool call: get_segment of the first failed trajectory's turns 0..1
  bad_tool       two tool calls: get_segment with arguments that are not JSON, and a tool
                 that does not exist
  slow:MS        sleep MS milliseconds, then answer as oracle
  hang           never answer (the connection is held until the server stops)
  http500        answer HTTP 500
  garbage        HTTP 200 with a body that is not JSON
  huge           HTTP 200 with a 2 MiB body
  wrong_types    HTTP 200, a chat completion whose content is a number, tool_calls a string
                 and usage.prompt_tokens a string
TRIAGE's labelling prompt (judge/llm_label.h: "trajectory i (success|failed, n turns):"):
  labels         every turn t of trajectory i gets the role ROLES[(i + t) % 4], ROLES =
                 decisive, exploration, no_progress, regression (a fixed rule, no judgement)
  labels_unknown as labels, but turn 0 of trajectory 0 is "pivotal" (no such role)
  labels_short   as labels, but trajectory 0 has one role fewer than its turns
  labels_none    {"trajectories": []}: no turn labelled
--group-scripts FILE (a JSON object {"<group id>": "STEPS"}) plays STEPS for the conversation
about that group ("Group N." in the prompt), before a fake-script directive or --script.
--fail-first N answers the first N requests with HTTP 503 whatever the script says (a
retry test). --require-key KEY answers 401 unless "Authorization: Bearer KEY" is sent.
--log FILE appends one JSON line per request: {"n", "step", "turn", "request"}.
--port 0 (the default) takes a free port; it is written to --port-file (atomically) and
printed as "fake_openai: listening on PORT".
"""
import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOP = threading.Event()


class State:
    def __init__(self, args):
        self.script = args.script.split(",")
        self.answers = {}
        if args.answers:
            with open(args.answers, encoding="utf-8") as f:
                self.answers = json.load(f)
        self.group_scripts = {}
        if args.group_scripts:
            with open(args.group_scripts, encoding="utf-8") as f:
                self.group_scripts = json.load(f)
        self.log = args.log
        self.fail_first = args.fail_first
        self.key = args.require_key
        self.n = 0
        self.lock = threading.Lock()


def parse_prompt(messages):
    """The shown success, its turns and refused marks, the group id, failed trajectories."""
    user = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    if not isinstance(user, str):
        user = ""
    info = {"group": None, "success": 0, "n": 0, "turns": {}, "refused": set(), "failed": [],
            "user": user}
    m = re.search(r"Group (\d+)\.", user)
    if m:
        info["group"] = m.group(1)
    m = re.search(r"successful attempt to judge is trajectory (\d+) \((\d+) action turns", user)
    if m:
        info["success"], info["n"] = int(m.group(1)), int(m.group(2))
    full = user.split("in full:\n", 1)[-1].split("final observation:", 1)[0]
    for line in full.splitlines():
        t = re.match(r"turn (\d+)( \[refused\])?: (.*)$", line)
        if t:
            info["turns"][int(t.group(1))] = t.group(3)
            if t.group(2):
                info["refused"].add(int(t.group(1)))
    info["failed"] = [int(x) for x in re.findall(r"^trajectory (\d+) \(failed", user, re.M)]
    return info


ROLES = ["decisive", "exploration", "no_progress", "regression"]


def labels_answer(info, step):
    """The labelling prompt's trajectories, each turn labelled by the fixed rule."""
    out = []
    for m in re.finditer(r"^trajectory (\d+) \((?:success|failed), (\d+) turns\):", info["user"],
                         re.M):
        i, n = int(m.group(1)), int(m.group(2))
        roles = [ROLES[(i + t) % 4] for t in range(n)]
        if i == 0 and step == "labels_unknown" and roles:
            roles[0] = "pivotal"
        if i == 0 and step == "labels_short" and roles:
            roles = roles[:-1]
        out.append({"traj_id": i, "roles": roles})
    return {"trajectories": [] if step == "labels_none" else out}


def oracle_answer(st, info):
    ans = dict(st.answers.get(info["group"] or "", {}))
    if "start_turn" not in ans:
        first = next((t for t in range(max(info["n"] - 1, 0)) if t not in info["refused"]), 0)
        ans["start_turn"] = ans["end_turn"] = first
    ans.setdefault("end_turn", ans["start_turn"])
    ans.setdefault("failure_mode", "the failed attempts never do what the success does here")
    ans.setdefault("traj_id", info["success"])
    if "actions" not in ans:
        ans["actions"] = [info["turns"].get(t, "?")
                          for t in range(ans["start_turn"], ans["end_turn"] + 1)]
    return ans


def completion(body, message, finish):
    content = str(message.get("content") or json.dumps(message.get("tool_calls", "")))
    p = len(json.dumps(body)) // 4
    c = len(content) // 4 + 1
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}}


def tool_call(n, name, args):
    return {"id": "call_%d" % n, "type": "function",
            "function": {"name": name, "arguments": args}}


def check_request(body):
    """An OpenAI-style 400 message for a request a strict server refuses, else None."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "model is required"
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return "messages must be a non-empty array"
    ids = set()
    for m in msgs:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            return "a message has no valid role"
        for c in m.get("tool_calls") or []:
            ids.add(c.get("id"))
        if m["role"] == "tool" and m.get("tool_call_id") not in ids:
            return "messages with role 'tool' must be a response to a preceding 'tool_calls'"
    rf = body.get("response_format")
    if rf is not None:
        if rf.get("type") == "json_schema":
            if not isinstance(rf.get("json_schema", {}).get("schema"), dict):
                return "response_format.json_schema.schema is required"
        elif rf.get("type") not in ("json_object", "text"):
            return "response_format.type is invalid"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: the test reads --log instead
        pass

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except OSError:
            pass

    def do_POST(self):
        st = self.server.st
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self.reply(404, {"error": {"message": "no such path", "type": "not_found"}})
        n_bytes = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n_bytes)
        with st.lock:
            st.n += 1
            n = st.n
        if st.key is not None and self.headers.get("Authorization") != "Bearer " + st.key:
            return self.reply(401, {"error": {"message": "bad key", "type": "auth"}})
        try:
            body = json.loads(raw)
        except ValueError:
            return self.reply(400, {"error": {"message": "not JSON", "type": "invalid_request"}})
        bad = check_request(body)
        if bad:
            return self.reply(400, {"error": {"message": bad, "type": "invalid_request_error"}})
        msgs = body["messages"]
        info = parse_prompt(msgs)
        script = st.script
        d = re.search(r"fake-script: ([a-z_0-9:,]+)", info["user"])
        if d:
            script = d.group(1).split(",")
        if info["group"] in st.group_scripts:
            script = st.group_scripts[info["group"]].split(",")
        turn = sum(1 for m in msgs if m.get("role") == "assistant")
        step = script[min(turn, len(script) - 1)]
        if n <= st.fail_first:
            step = "fail_first"
        if st.log:
            with st.lock, open(st.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"n": n, "step": step, "turn": turn, "request": body}) + "\n")
        if step == "fail_first":
            return self.reply(503, {"error": {"message": "warming up", "type": "server"}})
        if step == "http500":
            return self.reply(500, {"error": {"message": "scripted failure", "type": "server"}})
        if step == "hang":
            while not STOP.wait(0.1):
                pass
            return None
        if step == "garbage":
            data = b"<html>502 bad gateway, or so</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if step == "huge":
            return self.reply(200, {"padding": "x" * (2 << 20)})
        if step == "wrong_types":
            msg = {"role": "assistant", "content": 42, "tool_calls": "x"}
            out = completion(body, msg, "stop")
            out["usage"] = {"prompt_tokens": "many", "completion_tokens": -5}
            return self.reply(200, out)
        if step.startswith("slow:"):
            time.sleep(int(step.split(":", 1)[1]) / 1000.0)
            step = "oracle"
        if step == "search":
            words = info["turns"].get(0, "look")
            args = json.dumps({"query": words, "k": 3})
            msg = {"role": "assistant", "content": None,
                   "tool_calls": [tool_call(n, "search_trajectory", args)]}
            return self.reply(200, completion(body, msg, "tool_calls"))
        if step == "segment":
            f = info["failed"][0] if info["failed"] else 0
            args = json.dumps({"traj_id": f, "start_turn": 0, "end_turn": 1})
            msg = {"role": "assistant", "content": None,
                   "tool_calls": [tool_call(n, "get_segment", args)]}
            return self.reply(200, completion(body, msg, "tool_calls"))
        if step == "bad_tool":
            msg = {"role": "assistant", "content": None,
                   "tool_calls": [tool_call(n, "get_segment", "{traj_id: oops"),
                                  tool_call(n + 1000, "rm_rf", "{}")]}
            return self.reply(200, completion(body, msg, "tool_calls"))
        if step == "malformed":
            content = "Sure! The pivotal segment is turns 1 to 2 {not json"
        elif step.startswith("labels"):
            content = json.dumps(labels_answer(info, step))
        else:
            ans = oracle_answer(st, info)
            if step == "out_of_bounds":
                ans["end_turn"] = info["n"] + 5
            elif step == "terminal":
                ans["start_turn"] = ans["end_turn"] = max(info["n"] - 1, 0)
                ans["actions"] = [info["turns"].get(ans["end_turn"], "?")]
            elif step == "wrong_actions":
                ans["actions"] = ["dance around the room"] * len(ans["actions"])
            content = json.dumps(ans)
        msg = {"role": "assistant", "content": content}
        return self.reply(200, completion(body, msg, "stop"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--script", default="oracle")
    ap.add_argument("--answers")
    ap.add_argument("--group-scripts")
    ap.add_argument("--log")
    ap.add_argument("--fail-first", type=int, default=0)
    ap.add_argument("--require-key")
    args = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    srv.st = State(args)
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("fake_openai: listening on %d" % port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        STOP.set()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
