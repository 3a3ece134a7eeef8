#!/usr/bin/env python3
"""Specification of the fake kube-apiserver: what tests may rely on."""

import time
import unittest

from harness import FakeApiServer

NODES = "/api/v1/nodes"
PODS = "/api/v1/namespaces/default/pods"


class FakeApiServerBehaviour(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.api = FakeApiServer("--event-window", "5", "--watch-timeout-s", "2",
                                "--bookmark-interval-ms", "200").__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.api.__exit__(None, None, None)

    def setUp(self):
        self.api.must("DELETE", "/_fake/faults")
        self.name = self.id().split(".")[-1].replace("_", "-")[:60]

    def node(self, **meta):
        return self.api.must("POST", NODES, {"metadata": dict(name=self.name, **meta)})

    def test_missing_or_wrong_token_gets_401(self):
        status, body = self.api.request("GET", NODES, token="wrong")
        self.assertEqual(status, 401)
        self.assertEqual(body["reason"], "Unauthorized")
        status, _ = self.api.request("GET", "/_fake/requests", token="")
        self.assertEqual(status, 401)

    def test_create_sets_uid_timestamp_and_increasing_resource_version(self):
        a = self.node()
        self.assertTrue(a["metadata"]["uid"])
        self.assertTrue(a["metadata"]["creationTimestamp"].endswith("Z"))
        b = self.api.must("PATCH", NODES + "/" + self.name, {"metadata": {"labels": {"x": "1"}}},
                          "application/merge-patch+json")
        self.assertGreater(int(b["metadata"]["resourceVersion"]),
                           int(a["metadata"]["resourceVersion"]))

    def test_create_twice_is_409_already_exists(self):
        self.node()
        status, body = self.api.request("POST", NODES, {"metadata": {"name": self.name}})
        self.assertEqual((status, body["reason"]), (409, "AlreadyExists"))

    def test_get_missing_is_404_status_object(self):
        status, body = self.api.request("GET", NODES + "/nope")
        self.assertEqual(status, 404)
        self.assertEqual((body["kind"], body["reason"], body["code"]), ("Status", "NotFound", 404))

    def test_put_with_stale_resource_version_is_409_conflict(self):
        n = self.node()
        self.api.must("PATCH", NODES + "/" + self.name, {"metadata": {"labels": {"x": "1"}}},
                      "application/merge-patch+json")
        status, body = self.api.request("PUT", NODES + "/" + self.name, n)
        self.assertEqual((status, body["reason"]), (409, "Conflict"))

    def test_merge_patch_null_deletes_annotation(self):
        self.node(annotations={"a": "1", "b": "2"})
        out = self.api.must("PATCH", NODES + "/" + self.name,
                            {"metadata": {"annotations": {"a": None}}},
                            "application/strategic-merge-patch+json")
        self.assertEqual(out["metadata"]["annotations"], {"b": "2"})

    def test_patch_with_stale_resource_version_is_409(self):
        n = self.node(annotations={"lock": "x"})
        self.api.must("PATCH", NODES + "/" + self.name, {"metadata": {"labels": {"x": "1"}}},
                      "application/merge-patch+json")
        status, _ = self.api.request(
            "PATCH", NODES + "/" + self.name,
            {"metadata": {"resourceVersion": n["metadata"]["resourceVersion"],
                          "annotations": {"lock": None}}}, "application/merge-patch+json")
        self.assertEqual(status, 409)

    def test_json_patch_test_failure_is_422(self):
        self.node(annotations={"a": "1"})
        status, _ = self.api.request("PATCH", NODES + "/" + self.name,
                                     [{"op": "test", "path": "/metadata/annotations/a",
                                       "value": "2"}], "application/json-patch+json")
        self.assertEqual(status, 422)

    def test_status_subresource_changes_only_status(self):
        self.node()
        out = self.api.must("PATCH", NODES + "/" + self.name + "/status",
                            {"metadata": {"labels": {"ignored": "1"}},
                             "status": {"capacity": {"hygon.com/hcumem": "100"}}},
                            "application/strategic-merge-patch+json")
        self.assertEqual(out["status"]["capacity"], {"hygon.com/hcumem": "100"})
        self.assertNotIn("labels", out["metadata"])

    def test_delete_with_wrong_uid_is_409_and_keeps_object(self):
        self.api.must("POST", PODS, {"metadata": {"name": self.name}, "spec": {}})
        status, _ = self.api.request("DELETE", PODS + "/" + self.name,
                                     {"preconditions": {"uid": "other"}})
        self.assertEqual(status, 409)
        self.api.must("GET", PODS + "/" + self.name)

    def test_list_filters_by_field_and_label_selector(self):
        self.api.must("POST", PODS, {"metadata": {"name": self.name + "-a", "labels": {"k": "v"}},
                                     "spec": {"nodeName": "sel-node"}})
        self.api.must("POST", PODS, {"metadata": {"name": self.name + "-b"},
                                     "spec": {"nodeName": "sel-node"}})
        out = self.api.must("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dsel-node")
        self.assertEqual(len(out["items"]), 2)
        out = self.api.must("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dsel-node"
                            "&labelSelector=k%3Dv")
        self.assertEqual([i["metadata"]["name"] for i in out["items"]], [self.name + "-a"])

    def test_list_pages_with_limit_and_continue(self):
        for i in range(3):
            self.api.must("POST", "/api/v1/namespaces/paged/pods",
                          {"metadata": {"name": "p%d" % i}})
        first = self.api.must("GET", "/api/v1/namespaces/paged/pods?limit=2")
        self.assertEqual(len(first["items"]), 2)
        rest = self.api.must("GET", "/api/v1/namespaces/paged/pods?limit=2&continue=" +
                             first["metadata"]["continue"])
        self.assertEqual([i["metadata"]["name"] for i in rest["items"]], ["p2"])
        self.assertNotIn("continue", rest["metadata"])

    def test_list_at_resource_version_0_is_served_whole_from_the_cache(self):
        # As the real server's watch cache: the limit is ignored, no continue.
        for i in range(3):
            self.api.must("POST", "/api/v1/namespaces/cached/pods",
                          {"metadata": {"name": "p%d" % i}})
        whole = self.api.must("GET", "/api/v1/namespaces/cached/pods?resourceVersion=0&limit=2")
        self.assertEqual([i["metadata"]["name"] for i in whole["items"]], ["p0", "p1", "p2"])
        self.assertNotIn("continue", whole["metadata"])

    def test_watch_streams_changes_after_resource_version_then_bookmarks(self):
        n = self.node()
        rv = n["metadata"]["resourceVersion"]
        self.api.must("PATCH", NODES + "/" + self.name, {"metadata": {"labels": {"x": "1"}}},
                      "application/merge-patch+json")
        status, events = self.api.watch_lines(
            "/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=%s"
            "&fieldSelector=metadata.name%%3D%s" % (rv, self.name), 2)
        self.assertEqual(status, 200)
        self.assertEqual([e["type"] for e in events], ["MODIFIED", "BOOKMARK"])

    def test_watch_from_compacted_resource_version_is_410_error_event(self):
        n = self.node()
        for i in range(6):  # push the node's RV out of the 5-event window
            self.api.must("PATCH", NODES + "/" + self.name, {"metadata": {"labels": {"i": str(i)}}},
                          "application/merge-patch+json")
        _, events = self.api.watch_lines(
            "/api/v1/nodes?watch=true&resourceVersion=" + n["metadata"]["resourceVersion"], 1)
        self.assertEqual(events[0]["type"], "ERROR")
        self.assertEqual(events[0]["object"]["code"], 410)

    def test_watch_ends_at_timeout(self):
        start = time.monotonic()
        _, events = self.api.watch_lines("/api/v1/nodes?watch=true&resourceVersion=999999"
                                         "&timeoutSeconds=1", 100)
        self.assertLess(time.monotonic() - start, 5)
        self.assertEqual(events, [])

    def test_fault_answers_status_with_retry_after_then_expires(self):
        self.api.must("POST", "/_fake/faults", {"method": "GET", "path": "^/api/v1/nodes$",
                                                "status": 429, "retry_after": 3, "count": 1})
        status, body = self.api.request("GET", NODES)
        self.assertEqual((status, body["code"]), (429, 429))
        status, _ = self.api.request("GET", NODES)
        self.assertEqual(status, 200)

    def test_request_log_records_method_path_query_and_content_type(self):
        self.api.must("DELETE", "/_fake/requests")
        self.node()
        self.api.must("GET", NODES + "?limit=1")
        log = self.api.must("GET", "/_fake/requests")
        self.assertEqual([(r["method"], r["path"], r["query"]) for r in log],
                         [("POST", NODES, ""), ("GET", NODES, "limit=1")])
        self.assertEqual(log[0]["content_type"], "application/json")


if __name__ == "__main__":
    unittest.main()
