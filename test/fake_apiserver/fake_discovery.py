"""Discovery documents (core/v1) and server-side Table answers of the fake
kube-apiserver, as kubectl reads them."""

import fake_events
import fake_resource


def discovery_v1():
    def res(name, kind, namespaced, verbs, short=()):
        r = {"name": name, "singularName": kind.lower() if "/" not in name else "",
             "namespaced": namespaced, "kind": kind, "verbs": verbs}
        if short:
            r["shortNames"] = list(short)
        return r
    crud = ["create", "delete", "get", "list", "patch", "update", "watch"]
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        res("configmaps", "ConfigMap", True, crud, ["cm"]),
        fake_events.core_resource_entry(),
        res("namespaces", "Namespace", False, crud, ["ns"]),
        res("nodes", "Node", False, crud, ["no"]),
        res("nodes/status", "Node", False, ["get", "patch", "update"]),
        res("pods", "Pod", True, crud, ["po"]),
        res("pods/status", "Pod", True, ["get", "patch", "update"]),
    ]}


def make_table(objs, resource=""):
    extra = fake_resource.table_columns(resource)
    rows = []
    for o in objs:
        meta = o.get("metadata", {})
        rows.append({"cells": [meta.get("name", "")] + [get(o) for _, get in extra] +
                     [meta.get("creationTimestamp", "")],
                     "object": {"kind": "PartialObjectMetadata",
                                "apiVersion": "meta.k8s.io/v1", "metadata": meta}})
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name",
                "priority": 0}]
    columns += [{"name": n, "type": "string", "format": "", "description": n, "priority": 0}
                for n, _ in extra]
    columns.append({"name": "Created", "type": "string", "format": "", "description": "Created",
                    "priority": 0})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
            "columnDefinitions": columns, "rows": rows}
