"""Object store, errors and selectors of the fake kube-apiserver."""

import bisect
import copy
import datetime
import re
import threading
import uuid


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


RESOURCES = {
    # resource: (kind, namespaced, apiVersion)
    "nodes": ("Node", False, "v1"),
    "pods": ("Pod", True, "v1"),
    "configmaps": ("ConfigMap", True, "v1"),
    "namespaces": ("Namespace", False, "v1"),
    "resourceslices": ("ResourceSlice", False, "resource.k8s.io/v1"),
    "resourceclaims": ("ResourceClaim", True, "resource.k8s.io/v1"),
    "deviceclasses": ("DeviceClass", False, "resource.k8s.io/v1"),
}

# Field selectors the real server accepts, per resource (metadata.* always).
FIELD_SELECTORS = {
    "pods": ("spec.nodeName", "status.phase"),
    "resourceslices": ("spec.nodeName", "spec.driver"),
}


class ApiError(Exception):

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def body(self):
        b = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            b["details"] = self.details
        return b


def not_found(resource, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (resource, name),
                    {"name": name, "kind": resource})


def conflict(resource, name, why):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' %
                    (resource, name, why), {"name": name, "kind": resource})


class Store:
    """Objects keyed by (resource, namespace, name); a bounded event history."""

    def __init__(self, window):
        self.cond = threading.Condition()
        self.objects = {}
        self.rv = 1
        self.events = []  # (rv, resource, type, obj)
        self.window = window
        self.oldest_rv = 1  # requests for an RV below this get 410
        self.watch_epoch = 0  # bumped to end every open watch
        self.abrupt_epochs = {}  # epoch -> True when the watches were cut, not ended
        # validate(resource, new, old_or_None): may normalise `new`, raises
        # ApiError; called on create and on every non-status update.
        self.validate = lambda resource, new, old: None

    # All methods below are called with self.cond held.

    def events_after(self, rv, resource):
        """The recorded events of `resource` with a resourceVersion above rv
        (the history is in RV order: a bisect, not a scan per watcher)."""
        start = bisect.bisect_right(self.events, rv, key=lambda e: e[0])
        return [e for e in self.events[start:] if e[1] == resource]

    def _record(self, resource, etype, obj):
        self.events.append((self.rv, resource, etype, copy.deepcopy(obj)))
        if len(self.events) > self.window:
            dropped = self.events[:len(self.events) - self.window]
            self.events = self.events[len(dropped):]
            self.oldest_rv = dropped[-1][0] + 1
        self.cond.notify_all()

    def _bump(self, obj):
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def get(self, resource, ns, name):
        obj = self.objects.get((resource, ns, name))
        if obj is None:
            raise not_found(resource, name)
        return obj

    def create(self, resource, ns, obj):
        kind, namespaced, api_version = RESOURCES[resource]
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", "%s: metadata.name: Required value" % resource)
        if namespaced:
            if meta.get("namespace", ns) != ns:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does "
                               "not match the namespace sent on the request")
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if (resource, ns, name) in self.objects:
            raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (resource, name),
                           {"name": name, "kind": resource})
        self.validate(resource, obj, None)
        obj["kind"], obj["apiVersion"] = kind, api_version
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        meta.pop("resourceVersion", None)
        if resource == "pods":
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        self._bump(obj)
        self.objects[(resource, ns, name)] = obj
        self._record(resource, "ADDED", obj)
        return obj

    def update(self, resource, ns, name, new, subresource, check_rv):
        """Replaces an object (PUT or the result of a PATCH)."""
        old = self.get(resource, ns, name)
        meta = new.setdefault("metadata", {})
        if meta.get("name", name) != name:
            raise ApiError(400, "BadRequest", "the name of the object (%s) does not match the "
                           "name on the URL (%s)" % (meta.get("name"), name))
        want_rv = meta.get("resourceVersion")
        if check_rv and want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise conflict(resource, name, "the object has been modified; please apply your "
                           "changes to the latest version and try again")
        if subresource == "status":
            merged = copy.deepcopy(old)
            if "status" in new:
                merged["status"] = new["status"]
            new = merged
        else:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            for k in ("uid", "creationTimestamp", "namespace", "name"):
                if k in old["metadata"]:
                    new["metadata"][k] = old["metadata"][k]
                else:
                    new["metadata"].pop(k, None)
            new["kind"], new["apiVersion"] = old["kind"], old["apiVersion"]
            self.validate(resource, new, old)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        if new == old:
            return old  # a no-op write does not bump the resourceVersion
        self._bump(new)
        self.objects[(resource, ns, name)] = new
        self._record(resource, "MODIFIED", new)
        return new

    def delete(self, resource, ns, name, preconditions):
        old = self.get(resource, ns, name)
        pre_uid = preconditions.get("uid")
        if pre_uid and pre_uid != old["metadata"]["uid"]:
            raise conflict(resource, name, "Precondition failed: UID in precondition: %s, UID in "
                           "object meta: %s" % (pre_uid, old["metadata"]["uid"]))
        pre_rv = preconditions.get("resourceVersion")
        if pre_rv and pre_rv != old["metadata"]["resourceVersion"]:
            raise conflict(resource, name, "Precondition failed: ResourceVersion in precondition: "
                           "%s, ResourceVersion in object meta: %s" %
                           (pre_rv, old["metadata"]["resourceVersion"]))
        del self.objects[(resource, ns, name)]
        gone = copy.deepcopy(old)
        self._bump(gone)
        self._record(resource, "DELETED", gone)
        return gone


# ----------------------------------------------------------------------------
# Selectors


def _get_field(obj, path):
    cur = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part, "")
    return cur if isinstance(cur, str) else ""


def parse_selector(text, is_field, resource="pods"):
    """Returns a predicate for an equality-based selector; raises ApiError."""
    known = ("metadata.name", "metadata.namespace") + FIELD_SELECTORS.get(resource, ())
    reqs = []
    for term in filter(None, (t.strip() for t in (text or "").split(","))):
        m = re.fullmatch(r"([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)", term)
        if not m:
            if not is_field and re.fullmatch(r"!?[A-Za-z0-9./_-]+", term):
                reqs.append((term.lstrip("!"), "exists" if term[0] != "!" else "absent", ""))
                continue
            raise ApiError(400, "BadRequest", "unable to parse requirement: %r" % term)
        key, op, val = m.groups()
        if is_field and key not in known:
            raise ApiError(400, "BadRequest", '"%s" is not a known field selector: only %s' %
                           (key, ", ".join('"%s"' % k for k in known)))
        reqs.append((key, "!=" if op == "!=" else "=", val))

    def match(obj):
        labels = obj.get("metadata", {}).get("labels") or {}
        for key, op, val in reqs:
            have = _get_field(obj, key) if is_field else labels.get(key)
            if op == "exists" and have is None:
                return False
            if op == "absent" and have is not None:
                return False
            if op == "=" and (have or "") != val:
                return False
            if op == "!=" and (have or "") == val:
                return False
        return True

    return match


