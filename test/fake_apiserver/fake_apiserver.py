#!/usr/bin/env python3
"""A fake kube-apiserver for tests: core/v1 nodes, pods and configmaps over HTTPS.

Behaves like the real server where our client and kubectl depend on it:
bearer-token (and optional client-certificate) auth, discovery, a global
resourceVersion bumped on every write, LIST (and deletecollection) with field/label
selectors and paging, WATCH as chunked JSON lines with bookmarks, 410 Gone for a too-old
resourceVersion and a server-side timeout, merge / strategic-merge / JSON
patch, PUT with optimistic concurrency (409), POST 409 AlreadyExists, DELETE
with preconditions, and errors in the Kubernetes Status shape.

Test control (needs the token too):
  POST   /_fake/faults         {"method","path","query","status","count",
                                "delay_ms","retry_after","hang","body",
                                "lose_answer", "interim_retry_after"}  (regexes; status 0 = delay
                                only; "user_agent": a regex on the User-Agent header, so a
                                fault can spare the test's own requests; "hang": true accepts
                                the request and never answers it
                                until the faults are cleared; count -1: every request;
                                "body": this text is the answer, with "status";
                                "stream_bytes": N, with status 200: a chunked body of N
                                bytes of "x" and no newline;
                                "stall": true, with status 200: the watch's headers, then
                                silence (no event, no bookmark) until the faults are cleared)
  DELETE /_fake/faults         (also lets every hung request go: its connection is closed)
  GET    /_fake/requests       [{"method","path","query","content_type","watch",
                                 "peer_port"}]  (one peer port per TCP connection)
  DELETE /_fake/requests
  POST   /_fake/close_watches  ends every open watch stream
  POST   /_fake/compact        forgets the event history (older RVs get 410)
  POST   /_fake/gates          {"DRADeviceTaints": false, ...}: fields of gates that are off
  POST   /_fake/version        {"gitVersion": "v1.33.0"}: what /version says (an upgrade)
                               are dropped on write (fake_resource.py)
  GET    /_fake/requests?since=T  only the requests at or after T (CLOCK_MONOTONIC seconds);
                               each request also has "t", "user" (of its token, see
                               fake_fleet.py), "verb", "resource" and "status"
  POST   /_fake/tokens, POST /_fake/outage, GET /_fake/watches, GET /_fake/clock:
                               a fleet of clients (fake_fleet.py)

resource.k8s.io/v1 (resourceslices, resourceclaims, deviceclasses) with
validation of the DRA limits is in fake_resource.py.

Start-up: `fake_apiserver.py --dir D` generates a throwaway CA, server and
client certificates with the openssl CLI into D, writes D/token, D/kubeconfig
(token auth), D/kubeconfig-cert (client-certificate auth), D/wrong-ca.crt (an
unrelated CA) and finally D/ready.json {"port": N, ...}. The token is re-read
from D/token on every request, so tests rotate it by rewriting the file.
Python 3 standard library only.
"""

import argparse
import base64
import bisect
import copy
import http.server
import io
import json
import os
import random
import re
import select
import signal
import socket
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

import fake_events
import fake_fleet
import fake_patch
import fake_resource
from fake_discovery import discovery_v1, make_table
from fake_pki import make_pki, write_kubeconfigs
from fake_store import RESOURCES, ApiError, Store, now_rfc3339, parse_selector

# ----------------------------------------------------------------------------
# HTTP


class Fake:
    """Server-wide state: store, faults, request log, configuration."""

    def __init__(self, args, pki):
        self.args, self.pki = args, pki
        self.store = Store(args.event_window)
        self.lock = threading.Lock()
        self.faults = []
        self.unhang = threading.Event()  # set (and replaced) when the faults are cleared
        self.requests = []
        self.fleet = fake_fleet.Fleet()
        self.token_file = os.path.join(args.dir, "token")
        self.git_version = "v1.32.0-fake"  # /version; POST /_fake/version changes it
        self.gates = dict(fake_resource.DEFAULT_GATES)
        for item in filter(None, (args.feature_gates or "").split(",")):
            gate, _, value = item.partition("=")
            self.gates[gate] = value.lower() == "true"
        self.store.validate = lambda resource, new, old: fake_resource.validate(
            resource, new, old, dict(self.gates), now_rfc3339())


TABLE_ACCEPT = "as=Table"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-apiserver"
    fake = None  # set by main

    _entry = None  # this request's entry in the request log

    def send_response(self, code, message=None):
        if self._entry is not None:
            self._entry.setdefault("status", code)
        super().send_response(code, message)

    def log_message(self, fmt, *args):
        if self.fake.args.verbose:
            sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    # -- plumbing ------------------------------------------------------------

    def _send_json(self, code, body, content_type="application/json"):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, err, extra_headers=()):
        data = json.dumps(err.body()).encode()
        self.send_response(err.code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n > 0 else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ApiError(400, "BadRequest", "invalid JSON body: %s" % e)

    def _bearer(self):
        auth = self.headers.get("Authorization", "")
        return auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else ""

    def _authenticated(self):
        # Like the real server's union authenticator: a verified client
        # certificate or a valid bearer token is enough.
        if self.fake.args.client_cert_auth:
            try:
                if self.connection.getpeercert():
                    return True
            except (AttributeError, ValueError):
                pass
        token = self._bearer()
        if token:
            if self.fake.fleet.user_of(token) is not None:
                return True
            try:
                with open(self.fake.token_file) as f:
                    want = f.read().strip()
            except OSError:
                want = None
            return bool(want) and token == want
        return False

    def _handle(self, method):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query, keep_blank_values=True)
        q = {k: v[-1] for k, v in query.items()}
        is_watch = q.get("watch") in ("true", "1")
        self._entry = None
        try:
            if not path.startswith("/_fake/"):
                verb, resource = fake_fleet.classify(method, path, is_watch)
                self._entry = {
                    "method": method, "path": path, "query": url.query,
                    "content_type": self.headers.get("Content-Type", ""), "watch": is_watch,
                    "peer_port": self.client_address[1], "t": time.monotonic(),
                    "user": self.fake.fleet.user_of(self._bearer()) or "", "verb": verb,
                    "resource": resource}
                with self.fake.lock:
                    self.fake.requests.append(self._entry)
                if self.fake.fleet.in_outage():
                    self._read_body_quietly()
                    raise ApiError(503, "ServiceUnavailable", "the server is down (injected "
                                   "outage)")
            if not self._authenticated():
                self._read_body_quietly()
                raise ApiError(401, "Unauthorized", "Unauthorized")
            if path.startswith("/_fake/"):
                return self._control(method, path)
            if self._apply_fault(method, path, url.query, is_watch):
                return
            self._route(method, path, q, is_watch)
        except ApiError as e:
            self._send_error(e)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def _read_body_quietly(self):
        try:
            self._read_body()
        except ApiError:
            pass

    def _apply_fault(self, method, path, query, is_watch):
        with self.fake.lock:
            fault = None
            for f in self.fake.faults:
                if f["count"] == 0:
                    continue
                if f.get("method") and f["method"].upper() != method:
                    continue
                if f.get("path") and not re.search(f["path"], path):
                    continue
                if f.get("query") and not re.search(f["query"], query):
                    continue
                if f.get("user_agent") and not re.search(f["user_agent"],
                                                         self.headers.get("User-Agent", "")):
                    continue
                f["count"] -= 1
                fault = dict(f)
                break
        if fault is None:
            return False
        if fault.get("lose_answer"):
            # The request is applied, and its answer lost: the connection
            # closes before a byte of it comes back (a proxy or node that
            # failed at the wrong moment). A retry could apply it twice.
            real = self.wfile
            self.wfile = io.BytesIO()
            try:
                q = {k: v[-1] for k, v in
                     urllib.parse.parse_qs(query, keep_blank_values=True).items()}
                self._route(method, path, q, is_watch)
            except ApiError:
                pass
            finally:
                self.wfile = real
            self.close_connection = True
            return True
        if fault.get("hang"):
            # An API server that accepted the request and never answers.
            with self.fake.lock:
                released = self.fake.unhang
            released.wait()
            self.close_connection = True
            return True
        if fault.get("delay_ms"):
            time.sleep(fault["delay_ms"] / 1000.0)
        status = fault.get("status") or 0
        if status == 0:
            return False
        self._read_body_quietly()
        if fault.get("stall"):
            # A watch the server (or a proxy in between) accepted and then
            # forgot: the stream is open, and nothing ever comes.
            with self.fake.lock:
                released = self.fake.unhang
            try:
                self._start_stream()
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass
            released.wait()
            self.close_connection = True
            return True
        if fault.get("stream_bytes"):
            # A stream that never ends a line: this many bytes of "x", chunked.
            self._start_stream()
            left = int(fault["stream_bytes"])
            block = b"x" * 65536
            try:
                while left > 0:
                    data = block[:min(left, len(block))]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    left -= len(data)
                self._end_stream()
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass  # the client hung up first
            self.close_connection = True
            return True
        if fault.get("body") is not None:
            # A broken or hostile answer: this text, as is, with this status.
            data = fault["body"].encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return True
        if status == 410 and is_watch:
            # The real server answers 200 and reports expiry as an ERROR event.
            self._start_stream()
            self._write_chunk({"type": "ERROR", "object": ApiError(
                410, "Expired", "too old resource version (injected)").body()})
            self._end_stream()
            return True
        reasons = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
                   504: "Timeout", 409: "Conflict", 403: "Forbidden", 410: "Expired"}
        headers = []
        if fault.get("retry_after") is not None:
            headers.append(("Retry-After", str(fault["retry_after"])))
        if fault.get("interim_retry_after") is not None:
            # An interim response first (103 Early Hints, as a proxy or a
            # CDN may send), carrying a Retry-After of its own: only the
            # final response's headers count.
            self.send_response_only(103)
            self.send_header("Retry-After", str(fault["interim_retry_after"]))
            self.end_headers()
        self._send_error(ApiError(status, reasons.get(status, "InternalError"),
                                  "injected fault %d" % status), headers)
        return True

    def _control(self, method, path):
        fake = self.fake
        body = self._read_body()
        if path == "/_fake/faults" and method == "POST":
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "fault must be a JSON object")
            body.setdefault("count", 1)
            with fake.lock:
                fake.faults.append(body)
            return self._send_json(201, body)
        if path == "/_fake/faults" and method == "DELETE":
            with fake.lock:
                fake.faults = []
                fake.unhang.set()
                fake.unhang = threading.Event()
            return self._send_json(200, {})
        if path == "/_fake/requests" and method == "GET":
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            try:
                since = float(query.get("since", ["-inf"])[-1])
            except ValueError:
                raise ApiError(400, "BadRequest", "since: not a number")
            with fake.lock:
                return self._send_json(200, [r for r in fake.requests if r["t"] >= since])
        if path == "/_fake/requests" and method == "DELETE":
            with fake.lock:
                fake.requests = []
            return self._send_json(200, {})
        if path == "/_fake/close_watches" and method == "POST":
            self._cut_watches(abrupt=False)
            return self._send_json(200, {})
        if path == "/_fake/tokens" and method == "POST":
            fake.fleet.add_tokens(body)
            return self._send_json(200, {})
        if path == "/_fake/outage" and method == "POST":
            window = fake.fleet.start_outage(body)
            if body.get("restart"):
                with fake.store.cond:
                    fake.store.rv += 1  # the cluster's other writes
                    self._compact()
            self._cut_watches(abrupt=True)
            return self._send_json(200, window)
        if path == "/_fake/watches" and method == "GET":
            return self._send_json(200, fake.fleet.watches())
        if path == "/_fake/clock" and method == "GET":
            return self._send_json(200, {"t": time.monotonic()})
        if path == "/_fake/version" and method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("gitVersion"), str):
                raise ApiError(400, "BadRequest", "version must be {\"gitVersion\": string}")
            fake.git_version = body["gitVersion"]
            return self._send_json(200, {"gitVersion": fake.git_version})
        if path == "/_fake/gates" and method == "POST":
            if not isinstance(body, dict) or not all(isinstance(v, bool) for v in body.values()):
                raise ApiError(400, "BadRequest", "gates must be {name: bool}")
            with fake.store.cond:
                fake.gates.update(body)
                return self._send_json(200, dict(fake.gates))
        if path == "/_fake/compact" and method == "POST":
            with fake.store.cond:
                self._compact()
            return self._send_json(200, {"oldest": fake.store.oldest_rv})
        raise ApiError(404, "NotFound", "no control endpoint %s %s" % (method, path))

    def _compact(self):
        """Forgets the event history: a watch from an older RV gets 410.
        Called with the store's lock held."""
        self.fake.store.events = []
        self.fake.store.oldest_rv = self.fake.store.rv + 1

    def _cut_watches(self, abrupt):
        """Ends every open watch: cleanly (the stream's last chunk), or as a
        server going away does (the connection shut, nothing more sent)."""
        with self.fake.store.cond:
            self.fake.store.watch_epoch += 1
            self.fake.store.abrupt_epochs[self.fake.store.watch_epoch] = abrupt
            self.fake.store.cond.notify_all()

    # -- routing -------------------------------------------------------------

    def _route(self, method, path, q, is_watch):
        if method == "GET" and path in ("/version", "/version/"):
            return self._send_json(200, {
                "major": "1", "minor": "32", "gitVersion": self.fake.git_version,
                "gitCommit": "0" * 40, "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.23", "compiler": "gc", "platform": "linux/amd64"})
        if method == "GET" and path == "/api":
            return self._send_json(200, {
                "kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" %
                     self.server.server_address[1]}]})
        if method == "GET" and path.rstrip("/") == "/apis":
            return self._send_json(200, {"kind": "APIGroupList", "apiVersion": "v1",
                                         "groups": [fake_events.group_entry(),
                                                    fake_resource.api_group()]})
        if method == "GET" and path.rstrip("/") == "/apis/" + fake_resource.GROUP:
            return self._send_json(200, dict(fake_resource.api_group(), kind="APIGroup",
                                             apiVersion="v1"))
        if method == "GET" and path.rstrip("/") == "/apis/" + fake_resource.GROUP_VERSION:
            return self._send_json(200, fake_resource.discovery())
        if method == "GET" and path == "/api/v1":
            return self._send_json(200, discovery_v1())
        if fake_events.route(self, method, path, q):  # events.k8s.io/v1 and core/v1 events
            return
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group_version, parts = "v1", parts[2:]
        elif parts[:3] == ["apis"] + fake_resource.GROUP_VERSION.split("/"):
            group_version, parts = fake_resource.GROUP_VERSION, parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns = ""
        if len(parts) >= 3 and parts[0] == "namespaces" and parts[2] in RESOURCES:
            ns, parts = parts[1], parts[2:]
        if (not parts or parts[0] not in RESOURCES or len(parts) > 3 or
                RESOURCES[parts[0]][2] != group_version):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resource = parts[0]
        name = parts[1] if len(parts) > 1 else ""
        sub = parts[2] if len(parts) > 2 else ""
        namespaced = RESOURCES[resource][1]
        if sub and sub != "status":
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if name and namespaced and not ns:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not namespaced and ns:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not name:
            if method == "GET" and is_watch:
                return self._watch(resource, ns, q)
            if method == "GET":
                return self._list(resource, ns, q)
            if method == "POST":
                if namespaced and not ns:
                    raise ApiError(405, "MethodNotAllowed", "the server does not allow this "
                                   "method on the requested resource")
                body = self._read_body()
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "request body must be an object")
                with self.fake.store.cond:
                    obj = self.fake.store.create(resource, ns, body)
                    return self._send_json(201, obj)
            if method == "DELETE":
                return self._delete_collection(resource, ns, q)
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        store = self.fake.store
        if method == "GET":
            with store.cond:
                return self._send_object(200, store.get(resource, ns, name), resource)
        if method == "PUT":
            body = self._read_body()
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "request body must be an object")
            with store.cond:
                return self._send_json(200, store.update(resource, ns, name, body, sub, True))
        if method == "PATCH":
            return self._patch(resource, ns, name, sub)
        if method == "DELETE":
            body = self._read_body() or {}
            pre = body.get("preconditions") or {}
            with store.cond:
                return self._send_json(200, store.delete(resource, ns, name, pre))
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    def _delete_collection(self, resource, ns, q):
        """deletecollection (kubelet wipes its node's ResourceSlices this way):
        every object matching the selectors goes, each with a DELETED event;
        the answer is the list of what was deleted."""
        store = self.fake.store
        fsel = parse_selector(q.get("fieldSelector"), True, resource)
        lsel = parse_selector(q.get("labelSelector"), False)
        with store.cond:
            keys = sorted(k for k in store.objects if k[0] == resource and (not ns or k[1] == ns))
            items = [store.delete(*k, {}) for k in keys
                     if fsel(store.objects[k]) and lsel(store.objects[k])]
            rv = str(store.rv)
        return self._send_json(200, {"kind": RESOURCES[resource][0] + "List",
                                     "apiVersion": RESOURCES[resource][2],
                                     "metadata": {"resourceVersion": rv}, "items": items})

    def _send_object(self, code, obj, resource=""):
        if TABLE_ACCEPT in self.headers.get("Accept", ""):
            return self._send_json(code, make_table([obj], resource),
                                   "application/json;as=Table;v=v1;g=meta.k8s.io")
        return self._send_json(code, obj)

    def _patch(self, resource, ns, name, sub):
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self._read_body()
        store = self.fake.store
        with store.cond:
            old = store.get(resource, ns, name)
            try:
                if ctype == "application/merge-patch+json":
                    new = fake_patch.merge_patch(old, body)
                elif ctype == "application/strategic-merge-patch+json":
                    new = fake_patch.strategic_merge_patch(old, body)
                elif ctype == "application/json-patch+json":
                    new = fake_patch.json_patch(old, body)
                else:
                    raise ApiError(415, "UnsupportedMediaType",
                                   "the body of the request was in an unknown format - "
                                   "accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, "
                                   "application/apply-patch+yaml, "
                                   "application/strategic-merge-patch+json")
            except fake_patch.PatchError as e:
                raise ApiError(422, "Invalid", str(e))
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "patch result is not an object")
            # A resourceVersion written by the patch is a precondition.
            check = new.get("metadata", {}).get("resourceVersion") != old["metadata"].get(
                "resourceVersion")
            return self._send_json(200, store.update(resource, ns, name, new, sub, check))

    def _list(self, resource, ns, q):
        store = self.fake.store
        fsel = parse_selector(q.get("fieldSelector"), True, resource)
        lsel = parse_selector(q.get("labelSelector"), False)
        limit = int(q.get("limit") or 0)
        if q.get("resourceVersion") == "0":
            # Served from the watch cache, as the real server does: whole,
            # the limit ignored (no continue token).
            limit = 0
        after = None  # (namespace, name) of the last item already returned
        if q.get("continue"):
            try:
                after = tuple(json.loads(base64.b64decode(q["continue"]).decode()))
            except (ValueError, TypeError):
                raise ApiError(400, "BadRequest", "invalid continue token")
        with store.cond:
            keys = sorted(k for k in store.objects if k[0] == resource and (not ns or k[1] == ns))
            items = []
            more = ""
            for k in keys:
                if after is not None and (k[1], k[2]) <= after:
                    continue
                obj = store.objects[k]
                if not (fsel(obj) and lsel(obj)):
                    continue
                if limit and len(items) == limit:
                    last = items[-1]["metadata"]
                    more = base64.b64encode(json.dumps(
                        [last.get("namespace", ""), last["name"]]).encode()).decode()
                    break
                items.append(copy.deepcopy(obj))
            rv = str(store.rv)
        if TABLE_ACCEPT in self.headers.get("Accept", ""):
            return self._send_json(200, make_table(items, resource),
                                   "application/json;as=Table;v=v1;g=meta.k8s.io")
        meta = {"resourceVersion": rv}
        if more:
            meta["continue"] = more
        return self._send_json(200, {"kind": RESOURCES[resource][0] + "List",
                                     "apiVersion": RESOURCES[resource][2],
                                     "metadata": meta, "items": items})

    # -- watch ---------------------------------------------------------------

    def _start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _write_chunk(self, event):
        data = (json.dumps(event) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _watch_timeout_s(self, q):
        """The server's duration for this watch: the client's timeoutSeconds,
        capped by the server's; with --watch-timeout-min-s the server's cap
        is drawn from [min, max] per watch, as a real server spreads its
        watches over 30-60 min (--min-request-timeout=1800)."""
        cap = self.fake.args.watch_timeout_s
        low = self.fake.args.watch_timeout_min_s
        if 0 < low < cap:
            cap = random.uniform(low, cap)
        asked = int(q.get("timeoutSeconds") or 0)
        return min(asked, cap) if asked > 0 else cap

    def _peer_gone(self):
        # A watch client sends nothing after its request: the socket turning
        # readable means it hung up (or sent a TLS close_notify).
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable) and self.connection.pending() == 0

    def _watch(self, resource, ns, q):
        user = self.fake.fleet.user_of(self._bearer()) or ""
        self.fake.fleet.watch_opened(user)
        try:
            self._stream_watch(resource, ns, q)
        finally:
            self.fake.fleet.watch_closed(user)

    def _stream_watch(self, resource, ns, q):
        store = self.fake.store
        fsel = parse_selector(q.get("fieldSelector"), True, resource)
        lsel = parse_selector(q.get("labelSelector"), False)
        bookmarks = q.get("allowWatchBookmarks") == "true"
        deadline = time.monotonic() + self._watch_timeout_s(q)
        bookmark_s = self.fake.args.bookmark_interval_ms / 1000.0
        rv_text = q.get("resourceVersion") or ""
        self._start_stream()
        pending = []
        with store.cond:
            epoch = store.watch_epoch
            if rv_text in ("", "0"):
                # Start with synthetic ADDED events for the current state.
                for k in sorted(store.objects):
                    obj = store.objects[k]
                    if k[0] == resource and (not ns or k[1] == ns) and fsel(obj) and lsel(obj):
                        pending.append({"type": "ADDED", "object": copy.deepcopy(obj)})
                since = store.rv
            else:
                try:
                    since = int(rv_text)
                except ValueError:
                    since = -1
                if since < store.oldest_rv - 1 or since < 0:
                    pending.append({"type": "ERROR", "object": ApiError(
                        410, "Expired", "too old resource version: %s (%d)" %
                        (rv_text, store.oldest_rv - 1)).body()})
                    since = None
        for ev in pending:
            self._write_chunk(ev)
        if since is None:
            return self._end_stream()
        last_bookmark = time.monotonic()
        while True:
            out = []
            gone = False
            with store.cond:
                while True:
                    if store.watch_epoch != epoch:
                        break
                    out = store.events_after(since, resource)
                    if out:
                        break
                    now = time.monotonic()
                    if now >= deadline or (bookmarks and now - last_bookmark >= bookmark_s):
                        break
                    wait = deadline - now
                    if bookmarks:
                        wait = min(wait, bookmark_s - (now - last_bookmark))
                    # At most 1 s, to notice a client that hung up.
                    store.cond.wait(min(max(wait, 0.01), 1.0))
                    if self._peer_gone():
                        gone = True
                        break
                closed = store.watch_epoch != epoch
                abrupt = closed and store.abrupt_epochs.get(epoch + 1, False)
                current_rv = store.rv
                if out:
                    since = out[-1][0]
            if gone:
                self.close_connection = True
                return None
            if abrupt:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return None
            if closed:
                return self._end_stream()
            for rv, _, etype, obj in out:
                if (not ns or obj["metadata"].get("namespace") == ns) and fsel(obj) and lsel(obj):
                    self._write_chunk({"type": etype, "object": obj})
            now = time.monotonic()
            if bookmarks and (now - last_bookmark >= bookmark_s or now >= deadline):
                self._write_chunk({"type": "BOOKMARK", "object": {
                    "kind": RESOURCES[resource][0], "apiVersion": RESOURCES[resource][2],
                    "metadata": {"resourceVersion": str(max(since, current_rv))}}})
                since = max(since, current_rv)
                last_bookmark = now
            if now >= deadline:
                return self._end_stream()

    def do_GET(self):
        self._handle("GET")

    def do_POST(self):
        self._handle("POST")

    def do_PUT(self):
        self._handle("PUT")

    def do_PATCH(self):
        self._handle("PATCH")

    def do_DELETE(self):
        self._handle("DELETE")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # A fleet of clients connecting at once (50+ daemons starting, or
    # coming back after an outage) must not overflow the listen backlog.
    request_queue_size = 256

    def __init__(self, addr, handler, ctx):
        super().__init__(addr, handler)
        self.ctx = ctx

    def get_request(self):
        sock, addr = self.socket.accept()
        return sock, addr

    def finish_request(self, request, client_address):
        # TLS handshake on the worker thread, so a slow client blocks no one.
        try:
            request.settimeout(30)
            # Headers and body go out in separate writes: without this,
            # Nagle + delayed ACK add 40 ms to every response.
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            tls = self.ctx.wrap_socket(request, server_side=True)
            tls.settimeout(None)
        except (ssl.SSLError, OSError):
            return
        try:
            self.RequestHandlerClass(tls, client_address, self)
        finally:
            try:
                tls.close()
            except OSError:
                pass


def _exit_with_parent(parent):
    # A crashed test must not leave its server behind.
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True, help="where certificates, token and ready.json go")
    p.add_argument("--token", default="", help="initial bearer token (default: random)")
    p.add_argument("--event-window", type=int, default=1000,
                   help="watch events retained; older resourceVersions get 410 Gone")
    p.add_argument("--watch-timeout-s", type=int, default=60, help="max watch duration")
    p.add_argument("--watch-timeout-min-s", type=int, default=0,
                   help="when set, each watch's max duration is drawn from [this, "
                   "--watch-timeout-s] (a real server: 1800 to 3600)")
    p.add_argument("--bookmark-interval-ms", type=int, default=1000)
    p.add_argument("--no-client-cert-auth", dest="client_cert_auth", action="store_false",
                   help="refuse client certificates (by default one signed by the CA "
                   "authenticates like a token)")
    p.add_argument("--feature-gates", default="",
                   help="e.g. DRADeviceTaints=false: the server drops those fields on write")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    pki = make_pki(args.dir)
    token_file = os.path.join(args.dir, "token")
    with open(token_file, "w") as f:
        f.write(args.token or uuid.uuid4().hex)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki["server_cert"], pki["server_key"])
    if args.client_cert_auth:
        ctx.load_verify_locations(pki["ca"])
        ctx.verify_mode = ssl.CERT_OPTIONAL
    Handler.fake = Fake(args, pki)
    server = Server(("127.0.0.1", 0), Handler, ctx)
    port = server.server_address[1]
    write_kubeconfigs(args.dir, port, pki, token_file)
    ready = dict(pki, port=port, token_file=token_file, pid=os.getpid(),
                 kubeconfig=os.path.join(args.dir, "kubeconfig"),
                 kubeconfig_cert=os.path.join(args.dir, "kubeconfig-cert"),
                 wrong_ca=os.path.join(args.dir, "wrong-ca.crt"))
    tmp = os.path.join(args.dir, "ready.json.tmp")
    with open(tmp, "w") as f:
        json.dump(ready, f)
    os.rename(tmp, os.path.join(args.dir, "ready.json"))
    print(port, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    server.server_close()


if __name__ == "__main__":
    main()
