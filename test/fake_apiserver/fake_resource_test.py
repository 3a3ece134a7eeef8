#!/usr/bin/env python3
"""Specification of the fake's resource.k8s.io/v1: what DRA tests may rely on."""

import unittest

from harness import FakeApiServer

SLICES = "/apis/resource.k8s.io/v1/resourceslices"
CLAIMS = "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims"
CLASSES = "/apis/resource.k8s.io/v1/deviceclasses"


def device(name, taint=False, **extra):
    d = {"name": name, "attributes": {"type": {"string": "hcu"},
                                      "resource.kubernetes.io/pciBusID": {"string": "0000:09:00.0"}},
         "capacity": {"cores": {"value": "120", "requestPolicy": {"default": "120"}}},
         "allowMultipleAllocations": True}
    if taint:
        d["taints"] = [{"key": "dra.hygon.com/unhealthy", "effect": "NoSchedule"}]
    d.update(extra)
    return d


def slice_obj(node, devices, generation=1, count=1, driver="dra.hygon.com"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"generateName": node + "-" + driver + "-"},
            "spec": {"driver": driver, "nodeName": node,
                     "pool": {"name": node, "generation": generation,
                              "resourceSliceCount": count},
                     "devices": devices}}


class ResourceApi(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.api = FakeApiServer().__enter__()

    @classmethod
    def tearDownClass(cls):
        cls.api.__exit__(None, None, None)

    def setUp(self):
        self.api.must("POST", "/_fake/gates", {"DRADeviceTaints": True,
                                                "DRAConsumableCapacity": True})

    def invalid(self, obj, words):
        status, body = self.api.request("POST", SLICES, obj)
        self.assertEqual(status, 422, body)
        self.assertEqual(body["reason"], "Invalid")
        self.assertIn(words, body["message"])

    def test_discovery_lists_the_group_and_its_resources(self):
        groups = self.api.must("GET", "/apis")
        self.assertIn("resource.k8s.io", [g["name"] for g in groups["groups"]])
        res = self.api.must("GET", "/apis/resource.k8s.io/v1")
        by_name = {r["name"]: r for r in res["resources"]}
        self.assertFalse(by_name["resourceslices"]["namespaced"])
        self.assertTrue(by_name["resourceclaims"]["namespaced"])
        self.assertFalse(by_name["deviceclasses"]["namespaced"])

    def test_create_gives_name_uid_rv_and_api_version(self):
        s = self.api.must("POST", SLICES, slice_obj("n-create", [device("hcu-a")]))
        self.assertTrue(s["metadata"]["name"].startswith("n-create-dra.hygon.com-"))
        self.assertEqual(s["apiVersion"], "resource.k8s.io/v1")
        self.assertTrue(s["metadata"]["uid"] and s["metadata"]["resourceVersion"])

    def test_field_selector_on_node_and_driver(self):
        self.api.must("POST", SLICES, slice_obj("n-sel-a", [device("hcu-a")]))
        self.api.must("POST", SLICES, slice_obj("n-sel-b", [device("hcu-a")]))
        self.api.must("POST", SLICES, slice_obj("n-sel-a", [device("x")], driver="other.io"))
        got = self.api.must("GET", SLICES + "?fieldSelector=spec.nodeName%3Dn-sel-a,"
                            "spec.driver%3Ddra.hygon.com")
        self.assertEqual([(i["spec"]["nodeName"], i["spec"]["driver"]) for i in got["items"]],
                         [("n-sel-a", "dra.hygon.com")])
        status, _ = self.api.request("GET", SLICES + "?fieldSelector=spec.pool%3Dx")
        self.assertEqual(status, 400)

    def test_deletecollection_by_node_as_kubelet_wipes(self):
        self.api.must("POST", SLICES, slice_obj("n-wipe-a", [device("hcu-a")]))
        self.api.must("POST", SLICES, slice_obj("n-wipe-a", [device("x")], driver="other.io"))
        keep = self.api.must("POST", SLICES, slice_obj("n-wipe-b", [device("hcu-a")]))
        gone = self.api.must("DELETE", SLICES + "?fieldSelector=spec.nodeName%3Dn-wipe-a")
        self.assertEqual(sorted(i["spec"]["driver"] for i in gone["items"]),
                         ["dra.hygon.com", "other.io"])
        left = self.api.must("GET", SLICES + "?fieldSelector=spec.nodeName%3Dn-wipe-a")
        self.assertEqual(left["items"], [])
        other = self.api.must("GET", SLICES + "?fieldSelector=spec.nodeName%3Dn-wipe-b")
        self.assertEqual([i["metadata"]["uid"] for i in other["items"]], [keep["metadata"]["uid"]])

    def test_128_devices_pass_129_do_not(self):
        self.api.must("POST", SLICES, slice_obj("n-128", [device("d%d" % i) for i in range(128)]))
        self.invalid(slice_obj("n-129", [device("d%d" % i) for i in range(129)]),
                     "must have at most 128 items")

    def test_64_devices_with_a_taint_pass_65_do_not(self):
        devs = [device("d%d" % i, taint=(i == 0)) for i in range(64)]
        s = self.api.must("POST", SLICES, slice_obj("n-64", devs))
        self.assertTrue(s["spec"]["devices"][0]["taints"][0]["timeAdded"])
        self.invalid(slice_obj("n-65", [device("d%d" % i, taint=(i == 3)) for i in range(65)]),
                     "must have at most 64 items")

    def test_names_and_attributes_follow_the_grammar(self):
        self.invalid(slice_obj("n-bad", [device("Hcu_A")]), "RFC 1123 label")
        self.invalid(slice_obj("n-bad", [device("a"), device("a")]), "Duplicate value")
        bad = device("a")
        bad["attributes"]["1bad"] = {"string": "x"}
        self.invalid(slice_obj("n-bad", [bad]), "not a qualified name")
        two = device("a")
        two["attributes"]["x"] = {"string": "x", "int": 1}
        self.invalid(slice_obj("n-bad", [two]), "exactly one value")
        long = device("a")
        long["attributes"]["x"] = {"string": "y" * 65}
        self.invalid(slice_obj("n-bad", [long]), "Too long")
        ver = device("a")
        ver["attributes"]["v"] = {"version": "6.3"}
        self.invalid(slice_obj("n-bad", [ver]), "semver")
        many = device("a")
        for i in range(31):
            many["attributes"]["a%d" % i] = {"int": i}
        self.invalid(slice_obj("n-bad", [many]), "at most 32 attributes and capacities")
        self.invalid(slice_obj("n-bad", [device("a")], count=0), "resourceSliceCount")
        self.invalid(slice_obj("n-bad", [device("a")], driver="Bad_Driver"), "spec.driver")

    def test_request_policy_must_lie_on_its_range_and_step(self):
        def with_policy(value, policy):
            d = device("a")
            d["capacity"] = {"memory": {"value": value, "requestPolicy": policy}}
            return slice_obj("n-policy", [d])
        self.api.must("POST", SLICES, with_policy("65520Mi", {
            "default": "65520Mi", "validRange": {"min": "0", "max": "65520Mi", "step": "1Mi"}}))
        self.invalid(with_policy("1000", {"default": "1000", "validRange": {
            "min": "0", "max": "1000", "step": "1Mi"}}), "multiple of step")
        self.invalid(with_policy("4", {"default": "5", "validRange": {
            "min": "1", "max": "4", "step": "1"}}), "within validRange")

    def test_update_checks_rv_and_immutable_fields(self):
        s = self.api.must("POST", SLICES, slice_obj("n-upd", [device("a")]))
        path = SLICES + "/" + s["metadata"]["name"]
        s["spec"]["pool"]["generation"] = 2
        s2 = self.api.must("PUT", path, s)
        self.assertGreater(int(s2["metadata"]["resourceVersion"]),
                           int(s["metadata"]["resourceVersion"]))
        status, body = self.api.request("PUT", path, s)  # the old resourceVersion
        self.assertEqual((status, body["reason"]), (409, "Conflict"))
        s2["spec"]["nodeName"] = "elsewhere"
        status, body = self.api.request("PUT", path, s2)
        self.assertEqual(status, 422)
        self.assertIn("immutable", body["message"])

    def test_gate_off_drops_taints_and_consumable_fields_silently(self):
        self.api.must("POST", "/_fake/gates", {"DRADeviceTaints": False,
                                                "DRAConsumableCapacity": False})
        s = self.api.must("POST", SLICES, slice_obj("n-gate", [device("a", taint=True)]))
        dev = s["spec"]["devices"][0]
        self.assertNotIn("taints", dev)
        self.assertNotIn("allowMultipleAllocations", dev)
        self.assertNotIn("requestPolicy", dev["capacity"]["cores"])
        stored = self.api.must("GET", SLICES + "/" + s["metadata"]["name"])
        self.assertEqual(stored["spec"]["devices"][0], dev)

    def test_claims_are_namespaced_with_status_and_classes_cluster_scoped(self):
        self.api.must("POST", CLASSES, {"metadata": {"name": "dra.hygon.com"}, "spec": {}})
        c = self.api.must("POST", CLAIMS % "ns1", {
            "metadata": {"name": "c1"},
            "spec": {"devices": {"requests": [{"name": "hcu", "exactly": {
                "deviceClassName": "dra.hygon.com"}}]}}})
        self.assertEqual(c["metadata"]["namespace"], "ns1")
        c["status"] = {"allocation": {"devices": {"results": [{
            "request": "hcu", "driver": "dra.hygon.com", "pool": "n", "device": "hcu-a"}]}}}
        self.api.must("PUT", CLAIMS % "ns1" + "/c1/status", c)
        got = self.api.must("GET", CLAIMS % "ns1" + "/c1")
        self.assertEqual(got["status"]["allocation"]["devices"]["results"][0]["device"], "hcu-a")
        all_ns = self.api.must("GET", "/apis/resource.k8s.io/v1/resourceclaims")
        self.assertIn("c1", [i["metadata"]["name"] for i in all_ns["items"]])
        status, _ = self.api.request("GET", "/apis/resource.k8s.io/v1/namespaces/ns1/"
                                     "deviceclasses/dra.hygon.com")
        self.assertEqual(status, 404)

    def test_watch_sees_slice_deletion(self):
        s = self.api.must("POST", SLICES, slice_obj("n-watch", [device("a")]))
        rv = s["metadata"]["resourceVersion"]
        self.api.must("DELETE", SLICES + "/" + s["metadata"]["name"])
        status, events = self.api.watch_lines(
            SLICES + "?watch=true&resourceVersion=%s&timeoutSeconds=5"
            "&fieldSelector=spec.nodeName%%3Dn-watch" % rv, 1)
        self.assertEqual(status, 200)
        self.assertEqual([e["type"] for e in events], ["DELETED"])


if __name__ == "__main__":
    unittest.main()
