"""What the fake kube-apiserver needs to serve a fleet of nodes (issue 24).

Many clients at once, each known by its own bearer token (as a real cluster
gives each node agent its own ServiceAccount token); every request is logged
with who sent it, when, its Kubernetes verb and resource, and the status it
got, so that a benchmark can count requests per node by verb and resource.

Test control (with the server's own token, like every /_fake/ endpoint):
  POST /_fake/tokens   {"<token>": "<user>", ...}: these tokens authenticate
                       too, and their requests are logged as that user
  POST /_fake/outage   {"seconds": S, "restart": bool}: every open watch is
                       cut (the socket shut, no terminating chunk: a server
                       going away), and for S seconds every API request is
                       answered 503 ServiceUnavailable; answers
                       {"start": t, "end": t}. "restart": the server comes
                       back as a restarted kube-apiserver does, its watch
                       cache filled anew at a later resourceVersion (the
                       cluster's other writes, leases, move it on): a watch
                       from any RV before the outage gets 410 Gone
  GET  /_fake/watches  {"<user>": open watch streams}
  GET  /_fake/clock    {"t": now}

Times ("t" here and in /_fake/requests) are CLOCK_MONOTONIC seconds
(Python's time.monotonic()), the clock std::chrono::steady_clock reads on
Linux, so a test compares them with its own.
"""

import threading
import time

from fake_store import RESOURCES, ApiError

# Paths that are discovery, not resources.
_DISCOVERY = ("/version", "/api", "/apis", "/openapi")


class Fleet:
    """Per-client accounting, extra tokens and the outage switch."""

    def __init__(self):
        self.lock = threading.Lock()
        self.tokens = {}  # token -> user
        self.outage_until = 0.0
        self.open_watches = {}  # user -> open watch streams

    def user_of(self, token):
        with self.lock:
            return self.tokens.get(token)

    def add_tokens(self, body):
        if not isinstance(body, dict) or not all(
                isinstance(k, str) and k and isinstance(v, str) and v for k, v in body.items()):
            raise ApiError(400, "BadRequest", "tokens must be {\"<token>\": \"<user>\"}")
        with self.lock:
            self.tokens.update(body)

    def in_outage(self):
        with self.lock:
            return time.monotonic() < self.outage_until

    def start_outage(self, body):
        seconds = body.get("seconds") if isinstance(body, dict) else None
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
            raise ApiError(400, "BadRequest", "outage needs {\"seconds\": S >= 0}")
        if not isinstance(body.get("restart", False), bool):
            raise ApiError(400, "BadRequest", "outage: restart must be a boolean")
        with self.lock:
            start = time.monotonic()
            self.outage_until = start + seconds
        return {"start": start, "end": start + seconds}

    def watch_opened(self, user):
        with self.lock:
            self.open_watches[user] = self.open_watches.get(user, 0) + 1

    def watch_closed(self, user):
        with self.lock:
            self.open_watches[user] -= 1
            if self.open_watches[user] == 0:
                del self.open_watches[user]

    def watches(self):
        with self.lock:
            return dict(self.open_watches)


def classify(method, path, is_watch):
    """(verb, resource) of a request as the API server's audit log names them:
    get/list/watch/create/update/patch/delete/deletecollection, and
    "nodes", "nodes/status", "resourceslices", "events", ...; discovery is
    ("get", "discovery")."""
    if path.rstrip("/") in _DISCOVERY or path.startswith("/openapi/"):
        return "get", "discovery"
    parts = [p for p in path.split("/") if p]
    if parts[:2] == ["api", "v1"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        parts = parts[3:]
    else:
        return method.lower(), "unknown"
    if not parts:
        return "get", "discovery"
    if len(parts) >= 3 and parts[0] == "namespaces" and (parts[2] in RESOURCES or
                                                         parts[2] == "events"):
        parts = parts[2:]
    resource = parts[0]
    named = len(parts) >= 2
    if len(parts) >= 3:
        resource += "/" + parts[2]
    if method == "GET":
        verb = "watch" if is_watch else ("get" if named else "list")
    elif method == "DELETE":
        verb = "delete" if named else "deletecollection"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, method.lower())
    return verb, resource
