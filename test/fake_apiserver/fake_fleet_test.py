#!/usr/bin/env python3
"""Specification of the fake kube-apiserver's fleet features (fake_fleet.py):
one token per client, the request log by client, verb and resource, the
outage switch, open watches counted, and many long watches at once."""

import http.client
import threading
import time
import unittest

import fake_fleet
from harness import FakeApiServer

NODES = "/api/v1/nodes"
CLIENTS = 60


class Classify(unittest.TestCase):

    def test_verbs_and_resources_as_the_audit_log_names_them(self):
        cases = {
            ("GET", "/api/v1/nodes/n1", False): ("get", "nodes"),
            ("GET", "/api/v1/pods", False): ("list", "pods"),
            ("GET", "/api/v1/pods", True): ("watch", "pods"),
            ("GET", "/api/v1/namespaces/default/pods", True): ("watch", "pods"),
            ("PATCH", "/api/v1/nodes/n1/status", False): ("patch", "nodes/status"),
            ("PUT", "/api/v1/namespaces/kube-system/configmaps/c", False):
                ("update", "configmaps"),
            ("POST", "/apis/resource.k8s.io/v1/resourceslices", False):
                ("create", "resourceslices"),
            ("DELETE", "/apis/resource.k8s.io/v1/resourceslices", False):
                ("deletecollection", "resourceslices"),
            ("DELETE", "/apis/resource.k8s.io/v1/resourceslices/s", False):
                ("delete", "resourceslices"),
            ("POST", "/apis/events.k8s.io/v1/namespaces/default/events", False):
                ("create", "events"),
            ("PATCH", "/apis/events.k8s.io/v1/namespaces/default/events/e", False):
                ("patch", "events"),
            ("GET", "/apis/resource.k8s.io/v1", False): ("get", "discovery"),
            ("GET", "/version", False): ("get", "discovery"),
            ("GET", "/api", False): ("get", "discovery"),
        }
        for (method, path, watch), want in cases.items():
            self.assertEqual(fake_fleet.classify(method, path, watch), want, (method, path))


class Fleet(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.api = FakeApiServer("--watch-timeout-s", "3", "--watch-timeout-min-s", "2",
                                "--bookmark-interval-ms", "60000").__enter__()
        cls.api.must("POST", "/_fake/tokens",
                     {"tok-%03d" % i: "node-%03d" % i for i in range(CLIENTS)})

    @classmethod
    def tearDownClass(cls):
        cls.api.__exit__(None, None, None)

    def request(self, method, path, token, body=None):
        return self.api.request(method, path, body, token=token)

    def open_watch(self, token, path=NODES + "?watch=true&resourceVersion=1"):
        conn = self.api.connection(timeout=20)
        conn.request("GET", path, headers={"Authorization": "Bearer " + token})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        return conn, resp

    def test_each_token_is_a_user_in_the_request_log(self):
        t0 = self.api.must("GET", "/_fake/clock")["t"]
        self.assertEqual(self.request("GET", NODES + "/missing", "tok-001")[0], 404)
        self.assertEqual(self.request("GET", NODES, "tok-002")[0], 200)
        self.assertEqual(self.request("GET", NODES, "not-a-token")[0], 401)
        log = self.api.must("GET", "/_fake/requests?since=%f" % t0)
        self.assertEqual([(r["user"], r["verb"], r["resource"], r["status"]) for r in log],
                         [("node-001", "get", "nodes", 404), ("node-002", "list", "nodes", 200),
                          ("", "list", "nodes", 401)])
        self.assertTrue(all(t0 <= r["t"] for r in log))
        self.assertEqual(self.api.must("GET", "/_fake/requests?since=%f" % (log[-1]["t"] + 1)),
                         [])

    def test_bad_tokens_and_outage_bodies_are_400(self):
        self.assertEqual(self.api.request("POST", "/_fake/tokens", {"t": 1})[0], 400)
        self.assertEqual(self.api.request("POST", "/_fake/outage", {"seconds": -1})[0], 400)
        self.assertEqual(self.api.request("GET", "/_fake/requests?since=x")[0], 400)

    def test_outage_cuts_every_watch_and_answers_503_until_it_ends(self):
        conn, resp = self.open_watch("tok-010")
        window = self.api.must("POST", "/_fake/outage", {"seconds": 1.5})
        # Cut, not ended: the stream stops without its terminating chunk.
        with self.assertRaises((http.client.IncompleteRead, ConnectionError)):
            resp.read()
        conn.close()
        status, body = self.request("GET", NODES, "tok-010")
        self.assertEqual((status, body["reason"]), (503, "ServiceUnavailable"))
        time.sleep(max(0.0, window["end"] - time.monotonic()) + 0.05)
        self.assertEqual(self.request("GET", NODES, "tok-010")[0], 200)
        log = self.api.must("GET", "/_fake/requests?since=%f" % window["start"])
        self.assertEqual([r["status"] for r in log if r["user"] == "node-010"], [503, 200])

    def test_open_watches_are_counted_per_user_until_the_client_hangs_up(self):
        conn, _ = self.open_watch("tok-020")
        self.assertEqual(self.api.must("GET", "/_fake/watches").get("node-020"), 1)
        conn.close()
        deadline = time.monotonic() + 3
        while "node-020" in self.api.must("GET", "/_fake/watches"):
            self.assertLess(time.monotonic(), deadline, "watch still counted after hang-up")
            time.sleep(0.05)

    def test_watch_without_timeout_lasts_between_the_servers_min_and_max(self):
        start = time.monotonic()
        conn, resp = self.open_watch("tok-030")
        resp.read()  # ends cleanly at the server's timeout
        conn.close()
        self.assertGreaterEqual(time.monotonic() - start, 1.9)
        self.assertLess(time.monotonic() - start, 4)

    def test_sixty_clients_with_open_watches_all_get_the_event(self):
        got = []
        ready = threading.Barrier(CLIENTS + 1)

        def client(i):
            conn, resp = self.open_watch(
                "tok-%03d" % i, NODES + "?watch=true&resourceVersion=1&timeoutSeconds=20"
                "&fieldSelector=metadata.name%3Dfleet-node")
            ready.wait()
            line = resp.readline()
            conn.close()
            if b'"ADDED"' in line:
                got.append(i)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        ready.wait(timeout=30)
        self.assertEqual(len(self.api.must("GET", "/_fake/watches")), CLIENTS)
        self.api.must("POST", NODES, {"metadata": {"name": "fleet-node"}})
        for t in threads:
            t.join(timeout=30)
        self.assertEqual(sorted(got), list(range(CLIENTS)))


class Restart(unittest.TestCase):
    """An outage as a restart: the server comes back with a watch cache
    filled anew, so no watch resumes from before it (a relist, as kubelet
    and every informer do after a kube-apiserver restart)."""

    def test_only_a_restart_outage_expires_the_resourceversions_before_it(self):
        # A bookmark every 0.1 s: a watch that resumed says so at once.
        with FakeApiServer("--bookmark-interval-ms", "100") as api:
            def first_event(rv):
                status, events = api.watch_lines(
                    NODES + "?watch=true&allowWatchBookmarks=true&timeoutSeconds=5"
                    "&resourceVersion=" + rv, 1)
                self.assertEqual((status, len(events)), (200, 1))
                return events[0]

            api.must("POST", NODES, {"metadata": {"name": "n1"}})
            rv = api.must("GET", NODES)["metadata"]["resourceVersion"]
            api.must("POST", "/_fake/outage", {"seconds": 0})
            self.assertEqual(first_event(rv)["type"], "BOOKMARK")  # resumed
            self.assertEqual(api.request("POST", "/_fake/outage",
                                         {"seconds": 0, "restart": 1})[0], 400)
            api.must("POST", "/_fake/outage", {"seconds": 0, "restart": True})
            gone = first_event(rv)
            self.assertEqual((gone["type"], gone["object"]["code"]), ("ERROR", 410))
            # A relist gives an RV to watch from again.
            rv = api.must("GET", NODES)["metadata"]["resourceVersion"]
            self.assertEqual(first_event(rv)["type"], "BOOKMARK")

if __name__ == "__main__":
    unittest.main()
