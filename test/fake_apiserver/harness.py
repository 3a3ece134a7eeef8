"""Starts fake_apiserver.py for a Python test and talks to it.

    with FakeApiServer() as api:
        api.request("POST", "/api/v1/nodes", {"metadata": {"name": "n1"}})
        subprocess.run(["kubectl", "--kubeconfig", api.kubeconfig, "get", "nodes"])
"""

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import http.client

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeApiServer:

    def __init__(self, *extra_args):
        self.extra_args = list(extra_args)
        self.dir = None
        self.proc = None

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="fake-apiserver-")
        self.log = open(os.path.join(self.dir, "server.log"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "fake_apiserver.py"), "--dir", self.dir,
             *self.extra_args], stdout=self.log, stderr=self.log)
        ready = os.path.join(self.dir, "ready.json")
        deadline = time.monotonic() + 20
        while not os.path.exists(ready):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fake apiserver did not start: " +
                                   open(os.path.join(self.dir, "server.log")).read())
            time.sleep(0.02)
        with open(ready) as f:
            self.ready = json.load(f)
        self.port = self.ready["port"]
        self.kubeconfig = self.ready["kubeconfig"]
        self.kubeconfig_cert = self.ready["kubeconfig_cert"]
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def token(self):
        with open(self.ready["token_file"]) as f:
            return f.read().strip()

    def connection(self, timeout=10):
        ctx = ssl.create_default_context(cafile=self.ready["ca"])
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=timeout)

    def request(self, method, path, body=None, content_type="application/json", token=None):
        """Returns (status, decoded JSON body or text)."""
        conn = self.connection()
        headers = {"Authorization": "Bearer " + (self.token if token is None else token)}
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers["Content-Type"] = content_type
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read().decode()
        conn.close()
        try:
            return resp.status, json.loads(raw)
        except ValueError:
            return resp.status, raw

    def must(self, method, path, body=None, content_type="application/json"):
        status, out = self.request(method, path, body, content_type)
        if not 200 <= status < 300:
            raise AssertionError("%s %s -> %d %s" % (method, path, status, out))
        return out

    def watch_lines(self, path_and_query, max_events, timeout=10):
        """Opens a watch and returns up to max_events decoded events."""
        conn = self.connection(timeout)
        conn.request("GET", path_and_query, headers={"Authorization": "Bearer " + self.token})
        resp = conn.getresponse()
        events = []
        while len(events) < max_events:
            line = resp.readline()
            if not line:
                break
            events.append(json.loads(line))
        conn.close()
        return resp.status, events
