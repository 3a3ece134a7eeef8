#!/usr/bin/env python3
"""Self-test of the fake's events: the real server's validation, one store
seen through events.k8s.io/v1 and core/v1, series-only updates, and the
field selectors kubectl describe uses."""

import copy
import unittest

from harness import FakeApiServer

V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
GOOD = {
    "apiVersion": "events.k8s.io/v1", "kind": "Event",
    "metadata": {"name": "n1.1", "namespace": "default"},
    "eventTime": "2026-12-01T20:10:00.000001Z",
    "reportingController": "hygon.com/hcu-device-plugin",
    "reportingInstance": "hygon.com/hcu-device-plugin-n1",
    "action": "HealthCheck", "reason": "HCUUnhealthy",
    "regarding": {"kind": "Node", "apiVersion": "v1", "name": "n1", "uid": "n1"},
    "note": "card 0000:09:00.0 is Unhealthy", "type": "Warning",
}


def event(name, **changes):
    e = copy.deepcopy(GOOD)
    e["metadata"]["name"] = name
    for k, v in changes.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


class FakeEvents(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.api = FakeApiServer().__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.api.__exit__(None, None, None)

    def test_invalid_events_are_refused_like_the_real_server(self):
        bad = [
            event("b1", eventTime=None),
            event("b2", reportingController=""),
            event("b3", reportingController="not a name"),
            event("b4", reason="r" * 129),
            event("b5", action=""),
            event("b6", note="x" * 1025),
            event("b7", type="Error"),
            event("b8", deprecatedCount=3),
            event("b9", series={"count": 1, "lastObservedTime": "2026-12-01T20:10:00.000001Z"}),
        ]
        for e in bad:
            status, out = self.api.request("POST", V1, e)
            self.assertEqual(status, 422, (e["metadata"]["name"], out))
        # A Node event outside default/kube-system.
        e = event("b10")
        e["metadata"]["namespace"] = "team"
        status, out = self.api.request("POST", "/apis/events.k8s.io/v1/namespaces/team/events", e)
        self.assertEqual(status, 422, out)

    def test_one_store_two_views(self):
        self.api.must("POST", V1, event("view.1"))
        core = self.api.must("GET", "/api/v1/namespaces/default/events/view.1")
        self.assertEqual(core["apiVersion"], "v1")
        self.assertEqual(core["message"], GOOD["note"])
        self.assertEqual(core["involvedObject"]["name"], "n1")
        self.assertEqual(core["reportingComponent"], GOOD["reportingController"])
        v1 = self.api.must("GET", V1 + "/view.1")
        self.assertEqual(v1["note"], GOOD["note"])
        self.assertEqual(v1["regarding"]["uid"], "n1")

    def test_updates_may_change_only_the_series(self):
        self.api.must("POST", V1, event("upd.1"))
        status, out = self.api.request("PATCH", V1 + "/upd.1", {"note": "other"},
                                       "application/merge-patch+json")
        self.assertEqual(status, 422, out)
        status, out = self.api.request(
            "PATCH", V1 + "/upd.1", {"series": {"count": 1, "lastObservedTime": "x"}},
            "application/strategic-merge-patch+json")
        self.assertEqual(status, 422, out)
        out = self.api.must("PATCH", V1 + "/upd.1",
                            {"series": {"count": 2,
                                        "lastObservedTime": "2026-12-01T20:11:00.000000Z"}},
                            "application/strategic-merge-patch+json")
        self.assertEqual(out["series"]["count"], 2)
        self.assertEqual(self.api.must("GET", "/api/v1/namespaces/default/events/upd.1")
                         ["series"]["count"], 2)

    def test_duplicate_name_conflicts_and_missing_is_404(self):
        self.api.must("POST", V1, event("dup.1"))
        self.assertEqual(self.api.request("POST", V1, event("dup.1"))[0], 409)
        self.assertEqual(self.api.request("PATCH", V1 + "/nope", {"series": {}},
                                          "application/merge-patch+json")[0], 404)

    def test_core_list_filters_on_involved_object(self):
        other = event("sel.2", regarding={"kind": "Node", "name": "n2", "uid": "n2"})
        self.api.must("POST", V1, event("sel.1"))
        self.api.must("POST", V1, other)
        out = self.api.must("GET", "/api/v1/events?fieldSelector=involvedObject.kind%3DNode%2C"
                            "involvedObject.name%3Dn2%2CinvolvedObject.namespace%3D%2C"
                            "involvedObject.uid%3Dn2")
        self.assertEqual([i["metadata"]["name"] for i in out["items"]], ["sel.2"])
        status, _ = self.api.request("GET", "/api/v1/events?fieldSelector=spec.nodeName%3Dx")
        self.assertEqual(status, 400)

    def test_discovery_lists_the_group(self):
        groups = self.api.must("GET", "/apis")["groups"]
        self.assertIn("events.k8s.io", [g["name"] for g in groups])
        res = self.api.must("GET", "/apis/events.k8s.io/v1")["resources"]
        self.assertEqual([r["name"] for r in res], ["events"])


if __name__ == "__main__":
    unittest.main()
