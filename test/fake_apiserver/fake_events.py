"""Events for the fake kube-apiserver: events.k8s.io/v1 and core/v1, one store.

Like the real server, an Event is stored once and served through both APIs
(events.k8s.io/v1 regarding/note/reportingController/deprecated* <-> core/v1
involvedObject/message/reportingComponent/firstTimestamp...). Validation is the
real server's (kubernetes pkg/apis/core/validation/events.go, as summarised in
reference/ops.md §3b): an event with eventTime needs a qualified
reportingController, reportingInstance/action/reason of 1..128 characters, a
note of at most 1024 bytes, and when it is about a cluster-scoped object the
namespace default or kube-system; events.k8s.io/v1 creates must leave the
deprecated fields unset, have type Normal or Warning, and a series (if any)
with count >= 2 and lastObservedTime; an events.k8s.io/v1 update may change
nothing but the series.

Routes handled (route() returns False for anything else):
  /apis/events.k8s.io/v1                         discovery
  /apis/events.k8s.io/v1[/namespaces/NS]/events  GET (list), POST
  /apis/events.k8s.io/v1/namespaces/NS/events/N  GET, PATCH (merge/strategic), DELETE
  /api/v1[/namespaces/NS]/events                 GET (list; involvedObject.* field
                                                 selectors, as kubectl describe uses), POST
  /api/v1/namespaces/NS/events/N                 GET, DELETE
"""

import copy
import re

import fake_patch
from fake_store import ApiError, now_rfc3339

GROUP_VERSION = "events.k8s.io/v1"
GROUP_PATH = "/apis/events.k8s.io/v1"

# events.k8s.io/v1 field -> core/v1 field (the rest share their names).
_RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_SHARED = ("eventTime", "series", "action", "reason", "related", "reportingInstance", "type")
_CLUSTER_SCOPED = ("Node", "Namespace", "PersistentVolume", "StorageClass", "ClusterRole")
_QUALIFIED = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def group_entry():
    """The events.k8s.io entry of GET /apis."""
    v = {"groupVersion": GROUP_VERSION, "version": "v1"}
    return {"name": "events.k8s.io", "versions": [v], "preferredVersion": v}


def core_resource_entry():
    """The events entry of GET /api/v1."""
    return {"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
            "shortNames": ["ev"]}


def _empty(v):
    return v is None or v == "" or v == 0 or v == {}


def to_core(ev):
    core = {"apiVersion": "v1", "kind": "Event", "metadata": copy.deepcopy(ev.get("metadata", {}))}
    for new, old in _RENAMED.items():
        if not _empty(ev.get(new)):
            core[old] = copy.deepcopy(ev[new])
    for k in _SHARED:
        if not _empty(ev.get(k)):
            core[k] = copy.deepcopy(ev[k])
    return core


def to_events_v1(core):
    ev = {"apiVersion": GROUP_VERSION, "kind": "Event",
          "metadata": copy.deepcopy(core.get("metadata", {}))}
    for new, old in _RENAMED.items():
        if not _empty(core.get(old)):
            ev[new] = copy.deepcopy(core[old])
    for k in _SHARED:
        if not _empty(core.get(k)):
            ev[k] = copy.deepcopy(core[k])
    return ev


def _invalid(msgs):
    return ApiError(422, "Invalid", "Event is invalid: " + "; ".join(msgs))


def validate_v1(ev, ns):
    """events.k8s.io/v1 create validation; raises ApiError 422."""
    errs = []
    if not isinstance(ev, dict):
        raise ApiError(400, "BadRequest", "request body must be an object")
    meta = ev.get("metadata") or {}
    if meta.get("namespace", ns) != ns:
        raise ApiError(400, "BadRequest", "the namespace of the provided object does not match "
                       "the namespace sent on the request")
    if not meta.get("name") and not meta.get("generateName"):
        errs.append("metadata.name: Required value")
    if not ev.get("eventTime"):
        errs.append("eventTime: Required value")
    rc = ev.get("reportingController") or ""
    if not rc or not _QUALIFIED.match(rc.split("/")[-1]) or not _QUALIFIED.match(rc):
        errs.append("reportingController: Invalid value: %r: must be a qualified name" % rc)
    for field in ("reportingInstance", "action", "reason"):
        v = ev.get(field) or ""
        if not isinstance(v, str) or not 1 <= len(v) <= 128:
            errs.append("%s: Invalid value: must have 1 to 128 characters" % field)
    note = ev.get("note") or ""
    if not isinstance(note, str) or len(note.encode()) > 1024:
        errs.append("note: Too long: must have at most 1024 bytes")
    if ev.get("type") not in ("Normal", "Warning"):
        errs.append("type: Unsupported value: %r: supported values: \"Normal\", \"Warning\"" %
                    ev.get("type"))
    for field in ("deprecatedSource", "deprecatedFirstTimestamp", "deprecatedLastTimestamp",
                  "deprecatedCount"):
        if not _empty(ev.get(field)):
            errs.append("%s: Invalid value: must not be set" % field)
    series = ev.get("series")
    if series is not None:
        if not isinstance(series, dict) or not isinstance(series.get("count"), int) or \
                series["count"] < 2 or not series.get("lastObservedTime"):
            errs.append("series: Invalid value: count must be >= 2, lastObservedTime required")
    regarding = ev.get("regarding") or {}
    if regarding.get("kind") in _CLUSTER_SCOPED and ns not in ("default", "kube-system"):
        errs.append("metadata.namespace: Invalid value: %r: event for a cluster-scoped object "
                    "must be in default or kube-system" % ns)
    if errs:
        raise _invalid(errs)


def _field_value(obj, key):
    cur = obj
    for part in key.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part, "")
    return "" if cur is None else str(cur)


_CORE_FIELDS = ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                "involvedObject.uid", "involvedObject.apiVersion",
                "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                "reportingComponent", "source", "type", "metadata.name", "metadata.namespace")
_V1_FIELDS = ("regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
              "reason", "reportingController", "type", "metadata.name", "metadata.namespace")


def _selector(text, allowed):
    reqs = []
    for term in filter(None, (t.strip() for t in (text or "").split(","))):
        m = re.fullmatch(r"([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*(.*)", term)
        if not m or m.group(1) not in allowed:
            raise ApiError(400, "BadRequest", '"%s" is not a known field selector: only %s' %
                           (term, ", ".join('"%s"' % a for a in allowed)))
        reqs.append((m.group(1), m.group(2) != "!=", m.group(3)))
    return lambda obj: all((_field_value(obj, k) == v) == eq for k, eq, v in reqs)


class Events:
    """Bound to one request handler (fake_apiserver.Handler)."""

    def __init__(self, handler):
        self.h = handler
        self.store = handler.fake.store

    def route(self, method, path, q):
        parts = [p for p in path.split("/") if p]
        if parts[:3] == ["apis", "events.k8s.io", "v1"]:
            rest, v1 = parts[3:], True
        elif parts[:2] == ["api", "v1"] and "events" in parts[2:5]:
            rest, v1 = parts[2:], False
        else:
            return False
        if v1 and not rest:
            if method != "GET":
                raise ApiError(405, "MethodNotAllowed", "method not allowed")
            r = dict(core_resource_entry(), shortNames=["ev"])
            self.h._send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                    "groupVersion": GROUP_VERSION, "resources": [r]})
            return True
        ns = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        if not rest or rest[0] != "events" or len(rest) > 2:
            return False
        name = rest[1] if len(rest) == 2 else ""
        if not name:
            if method == "GET":
                return self._list(ns, q, v1)
            if method == "POST":
                if not ns:
                    raise ApiError(405, "MethodNotAllowed", "the server does not allow this "
                                   "method on the requested resource")
                return self._create(ns, self.h._read_body(), v1)
            raise ApiError(405, "MethodNotAllowed", "method not allowed")
        if not ns:
            return False
        if method == "GET":
            with self.store.cond:
                obj = self.store.get("events", ns, name)
                self.h._send_json(200, to_events_v1(obj) if v1 else copy.deepcopy(obj))
            return True
        if method == "PATCH" and v1:
            return self._patch(ns, name)
        if method == "DELETE":
            self.h._read_body()
            with self.store.cond:
                old = self.store.get("events", ns, name)
                del self.store.objects[("events", ns, name)]
                self.store._bump(old)
                self.store._record("events", "DELETED", old)
            self.h._send_json(200, to_events_v1(old) if v1 else old)
            return True
        raise ApiError(405, "MethodNotAllowed", "method not allowed")

    def _create(self, ns, body, v1):
        if v1:
            validate_v1(body, ns)
            core = to_core(body)
        else:
            if not isinstance(body, dict):
                raise ApiError(400, "BadRequest", "request body must be an object")
            core = copy.deepcopy(body)
            core["apiVersion"], core["kind"] = "v1", "Event"
        meta = core.setdefault("metadata", {})
        meta["namespace"] = ns
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", "Event is invalid: metadata.name: Required value")
        with self.store.cond:
            if ("events", ns, name) in self.store.objects:
                raise ApiError(409, "AlreadyExists", 'events "%s" already exists' % name,
                               {"name": name, "kind": "events"})
            meta["uid"] = "%032x" % (hash((ns, name, self.store.rv)) & (2**128 - 1))
            meta["creationTimestamp"] = now_rfc3339()
            meta.pop("resourceVersion", None)
            self.store._bump(core)
            self.store.objects[("events", ns, name)] = core
            self.store._record("events", "ADDED", core)
            out = copy.deepcopy(core)
        self.h._send_json(201, to_events_v1(out) if v1 else out)
        return True

    def _patch(self, ns, name):
        ctype = (self.h.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self.h._read_body()
        with self.store.cond:
            old = to_events_v1(self.store.get("events", ns, name))
            try:
                if ctype == "application/merge-patch+json":
                    new = fake_patch.merge_patch(old, body)
                elif ctype == "application/strategic-merge-patch+json":
                    new = fake_patch.strategic_merge_patch(old, body)
                else:
                    raise ApiError(415, "UnsupportedMediaType", "unsupported patch type %s" % ctype)
            except fake_patch.PatchError as e:
                raise ApiError(422, "Invalid", str(e))
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "patch result is not an object")
            # Only the series may change through events.k8s.io/v1.
            strip = lambda e: {k: v for k, v in e.items() if k not in ("series", "metadata")}
            if strip(new) != strip(old):
                changed = sorted(k for k in set(strip(new)) | set(strip(old))
                                 if strip(new).get(k) != strip(old).get(k))
                raise _invalid(["%s: Forbidden: updates may only change the series" % k
                                for k in changed])
            series = new.get("series")
            if series is not None and (not isinstance(series.get("count"), int) or
                                       series["count"] < 2 or not series.get("lastObservedTime")):
                raise _invalid(["series: Invalid value: count must be >= 2, lastObservedTime "
                                "required"])
            core = copy.deepcopy(self.store.get("events", ns, name))
            if series is None:
                core.pop("series", None)
            else:
                core["series"] = series
            self.store._bump(core)
            self.store.objects[("events", ns, name)] = core
            self.store._record("events", "MODIFIED", core)
            out = to_events_v1(core)
        self.h._send_json(200, out)
        return True

    def _list(self, ns, q, v1):
        match = _selector(q.get("fieldSelector"), _V1_FIELDS if v1 else _CORE_FIELDS)
        with self.store.cond:
            items = []
            for k in sorted(self.store.objects):
                if k[0] != "events" or (ns and k[1] != ns):
                    continue
                core = self.store.objects[k]
                view = to_events_v1(core) if v1 else copy.deepcopy(core)
                if match(view):
                    items.append(view)
            rv = str(self.store.rv)
        self.h._send_json(200, {"kind": "EventList", "apiVersion": GROUP_VERSION if v1 else "v1",
                                "metadata": {"resourceVersion": rv}, "items": items})
        return True


def route(handler, method, path, q):
    """Serves the request when it is about events; False otherwise."""
    return Events(handler).route(method, path, q)
