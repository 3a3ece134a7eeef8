#!/usr/bin/env python3
"""The real kubectl against the fake kube-apiserver: discovery, get, annotate,
patch (merge, strategic, json), raw /version, client-certificate auth, and
resource.k8s.io/v1: get resourceslices (cluster-scoped, field selector) and
get resourceclaims -A."""

import argparse
import json
import subprocess
import sys
import unittest

from harness import FakeApiServer

KUBECTL = "kubectl"


class KubectlAgainstFake(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.api = FakeApiServer().__enter__()
        cls.api.must("POST", "/api/v1/nodes", {"metadata": {"name": "node1",
                                                              "labels": {"zone": "a"}}})
        cls.api.must("POST", "/api/v1/nodes", {"metadata": {"name": "node2"}})
        cls.api.must("POST", "/api/v1/namespaces/default/pods", {
            "metadata": {"name": "p1"}, "spec": {"nodeName": "node1",
                                                 "containers": [{"name": "c", "image": "x"}]}})
        cls.api.must("POST", "/api/v1/namespaces/team/pods", {
            "metadata": {"name": "p2"}, "spec": {"nodeName": "node2",
                                                 "containers": [{"name": "c", "image": "x"}]}})

        for node in ("node1", "node2"):
            cls.api.must("POST", "/apis/resource.k8s.io/v1/resourceslices", {
                "metadata": {"generateName": node + "-dra.hygon.com-"},
                "spec": {"driver": "dra.hygon.com", "nodeName": node,
                         "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                         "devices": [{"name": "hcu-0000-09-00-0", "attributes": {
                             "type": {"string": "hcu"}}}]}})
        for ns, name in (("default", "claim-a"), ("team", "claim-b")):
            cls.api.must("POST", "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % ns, {
                "metadata": {"name": name},
                "spec": {"devices": {"requests": [{"name": "hcu", "exactly": {
                    "deviceClassName": "dra.hygon.com"}}]}}})

    @classmethod
    def tearDownClass(cls):
        cls.api.__exit__(None, None, None)

    def kubectl(self, *args, kubeconfig=None):
        r = subprocess.run([KUBECTL, "--kubeconfig", kubeconfig or self.api.kubeconfig,
                            "--request-timeout=10s", *args],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, "kubectl %s failed: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def test_get_nodes_json_lists_every_node(self):
        out = json.loads(self.kubectl("get", "nodes", "-o", "json"))
        self.assertEqual(sorted(i["metadata"]["name"] for i in out["items"]), ["node1", "node2"])

    def test_get_nodes_table_prints_names(self):
        out = self.kubectl("get", "nodes")
        self.assertIn("node1", out)
        self.assertIn("node2", out)

    def test_get_pods_all_namespaces(self):
        out = json.loads(self.kubectl("get", "pods", "-A", "-o", "json"))
        self.assertEqual(sorted((i["metadata"]["namespace"], i["metadata"]["name"])
                                for i in out["items"]), [("default", "p1"), ("team", "p2")])

    def test_get_pods_with_field_selector(self):
        out = json.loads(self.kubectl("get", "pods", "-A", "-o", "json",
                                      "--field-selector", "spec.nodeName=node2"))
        self.assertEqual([i["metadata"]["name"] for i in out["items"]], ["p2"])

    def test_get_nodes_with_label_selector(self):
        out = self.kubectl("get", "nodes", "-l", "zone=a", "-o", "name")
        self.assertEqual(out.split(), ["node/node1"])

    def test_annotate_node_sets_and_removes(self):
        self.kubectl("annotate", "node", "node1", "hami.io/node-handshake-hcu=Reported now")
        node = self.api.must("GET", "/api/v1/nodes/node1")
        self.assertEqual(node["metadata"]["annotations"]["hami.io/node-handshake-hcu"],
                         "Reported now")
        self.kubectl("annotate", "node", "node1", "hami.io/node-handshake-hcu-")
        node = self.api.must("GET", "/api/v1/nodes/node1")
        self.assertNotIn("hami.io/node-handshake-hcu", node["metadata"].get("annotations", {}))

    def test_patch_node_merge(self):
        self.kubectl("patch", "node", "node2", "--type=merge",
                     "-p", '{"metadata":{"labels":{"hcu":"yes"}}}')
        node = self.api.must("GET", "/api/v1/nodes/node2")
        self.assertEqual(node["metadata"]["labels"], {"hcu": "yes"})

    def test_patch_node_strategic_and_json(self):
        self.kubectl("patch", "node", "node2", "-p", '{"metadata":{"annotations":{"a":"1"}}}')
        self.kubectl("patch", "node", "node2", "--type=json",
                     "-p", '[{"op":"add","path":"/metadata/annotations/b","value":"2"}]')
        node = self.api.must("GET", "/api/v1/nodes/node2")
        self.assertEqual(node["metadata"]["annotations"], {"a": "1", "b": "2"})

    def test_patch_node_status_subresource(self):
        self.kubectl("patch", "node", "node1", "--subresource=status", "--type=merge", "-p",
                     '{"status":{"capacity":{"hygon.com/hcumem":"65520"}}}')
        node = self.api.must("GET", "/api/v1/nodes/node1")
        self.assertEqual(node["status"]["capacity"]["hygon.com/hcumem"], "65520")

    def test_get_resourceslices_table_and_field_selector(self):
        out = self.kubectl("get", "resourceslices")
        self.assertIn("node1-dra.hygon.com-", out)
        self.assertIn("DRIVER", out.upper())
        out = json.loads(self.kubectl("get", "resourceslices", "-o", "json", "--field-selector",
                                      "spec.nodeName=node2,spec.driver=dra.hygon.com"))
        self.assertEqual([i["spec"]["nodeName"] for i in out["items"]], ["node2"])
        self.assertEqual(out["items"][0]["apiVersion"], "resource.k8s.io/v1")

    def test_get_resourceclaims_all_namespaces(self):
        out = json.loads(self.kubectl("get", "resourceclaims", "-A", "-o", "json"))
        self.assertEqual(sorted((i["metadata"]["namespace"], i["metadata"]["name"])
                                for i in out["items"]), [("default", "claim-a"), ("team", "claim-b")])
        table = self.kubectl("get", "resourceclaims", "-A")
        self.assertIn("claim-b", table)

    def test_raw_version(self):
        out = json.loads(self.kubectl("get", "--raw", "/version"))
        self.assertEqual(out["major"], "1")

    def test_client_certificate_auth(self):
        out = self.kubectl("get", "nodes", "-o", "name", kubeconfig=self.api.kubeconfig_cert)
        self.assertIn("node/node1", out.split())

    def test_wrong_token_is_refused(self):
        with open(self.api.kubeconfig) as f:
            text = f.read().replace(self.api.token, "not-the-token")
        bad = self.api.kubeconfig + "-bad"
        with open(bad, "w") as f:
            f.write(text)
        r = subprocess.run([KUBECTL, "--kubeconfig", bad, "get", "nodes"],
                           capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("Unauthorized", r.stderr)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--kubectl", default="kubectl")
    args, rest = p.parse_known_args()
    KUBECTL = args.kubectl
    unittest.main(argv=[sys.argv[0], *rest])
