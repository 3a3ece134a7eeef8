"""resource.k8s.io/v1 in the fake kube-apiserver: ResourceSlices (cluster-scoped),
ResourceClaims (namespaced, with status), DeviceClasses (cluster-scoped).

What it checks on write, as the real server's validation does (the limits and
name grammar of reference/dra.md §3.2): driver (DNS subdomain <= 63), exactly
one of nodeName/nodeSelector/allNodes/perDeviceNodeSelection, pool name,
generation >= 0, resourceSliceCount > 0, <= 128 devices (<= 64 when any
device has taints), device names (DNS labels, unique), qualified attribute and
capacity names, exactly one attribute value type (string/version <= 64),
attributes + capacities <= 32, taints <= 16 with a known effect (timeAdded
filled in), immutable driver/pool name/nodeName on update.

Feature gates (test control): POST /_fake/gates {"DRADeviceTaints": false,
"DRAConsumableCapacity": false}. A gate that is off makes the server drop
its fields on write, silently, as a real API server does: device taints, or
allowMultipleAllocations and capacity requestPolicy.
"""

import re

from fake_store import ApiError

GROUP = "resource.k8s.io"
VERSION = "v1"
GROUP_VERSION = GROUP + "/" + VERSION

# resource: (kind, namespaced, shortNames)
RESOURCE_TYPES = {
    "resourceslices": ("ResourceSlice", False, []),
    "resourceclaims": ("ResourceClaim", True, []),
    "deviceclasses": ("DeviceClass", False, []),
}

# Field selectors the real server supports per resource (beyond metadata.*).
FIELD_SELECTORS = {
    "resourceslices": ("spec.nodeName", "spec.driver"),
    "resourceclaims": (),
    "deviceclasses": (),
}

DEFAULT_GATES = {"DRADeviceTaints": True, "DRAConsumableCapacity": True}

MAX_DEVICES = 128
MAX_DEVICES_WITH_TAINTS = 64
MAX_ATTRS_AND_CAPS = 32
MAX_TAINTS = 16

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + r"(\." + _LABEL + r")*"
_C_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def discovery():
    res = []
    for name, (kind, namespaced, short) in sorted(RESOURCE_TYPES.items()):
        r = {"name": name, "singularName": kind.lower(), "namespaced": namespaced,
             "kind": kind, "verbs": ["create", "delete", "deletecollection", "get", "list",
                                      "patch", "update", "watch"]}
        if short:
            r["shortNames"] = short
        res.append(r)
        if name == "resourceclaims":
            res.append({"name": "resourceclaims/status", "singularName": "",
                        "namespaced": True, "kind": kind, "verbs": ["get", "patch", "update"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
            "resources": res}


def api_group():
    return {"name": GROUP, "versions": [{"groupVersion": GROUP_VERSION, "version": VERSION}],
            "preferredVersion": {"groupVersion": GROUP_VERSION, "version": VERSION}}


def table_columns(resource):
    """Extra (name, getter) columns of `kubectl get` for a resource."""
    if resource == "resourceslices":
        return [("Node", lambda o: o.get("spec", {}).get("nodeName", "")),
                ("Driver", lambda o: o.get("spec", {}).get("driver", "")),
                ("Pool", lambda o: o.get("spec", {}).get("pool", {}).get("name", ""))]
    if resource == "resourceclaims":
        return [("State", lambda o: "allocated" if o.get("status", {}).get("allocation")
                 else "pending")]
    return []


def _invalid(kind, name, errors):
    msg = '%s.%s "%s" is invalid: %s' % (kind, GROUP, name, "; ".join(errors))
    return ApiError(422, "Invalid", msg, {"name": name, "group": GROUP, "kind": kind,
                                          "causes": [{"message": e} for e in errors]})


def _qualified(name):
    """A QualifiedName: a C identifier <= 32, or <DNS subdomain <= 63>/<C identifier <= 32>."""
    if "/" in name:
        domain, ident = name.split("/", 1)
        return (len(domain) <= 63 and re.fullmatch(_SUBDOMAIN, domain) is not None and
                len(ident) <= 32 and re.fullmatch(_C_IDENT, ident) is not None)
    return len(name) <= 32 and re.fullmatch(_C_IDENT, name) is not None


_SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(-((0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
                     r"(\.(0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?")
_QUANTITY = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE]|[nu])?")


_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def _quantity(text):
    """An integer quantity ("65520Mi", "120", "1k"); None when not one."""
    m = re.fullmatch(r"(\d+)([kMGTPE]i?|Ki)?", str(text))
    if not m or (m.group(2) or "") not in _SUFFIX:
        return None
    return int(m.group(1)) * _SUFFIX[m.group(2) or ""]


def _validate_policy(cpath, cap, errors):
    """requestPolicy: default within validRange, on its step (as the real server checks)."""
    policy = cap.get("requestPolicy")
    if not isinstance(policy, dict):
        return
    value = _quantity(cap.get("value"))
    default = _quantity(policy.get("default", cap.get("value")))
    rng = policy.get("validRange")
    if "validValues" in policy and rng is not None:
        errors.append(cpath + ".requestPolicy: Invalid value: only one of validValues, validRange")
    if not isinstance(rng, dict):
        return
    lo, hi = _quantity(rng.get("min")), _quantity(rng.get("max", cap.get("value")))
    step = _quantity(rng.get("step", "1"))
    if lo is None or hi is None or step in (None, 0) or default is None or value is None:
        errors.append(cpath + ".requestPolicy.validRange: Invalid value: not integer quantities")
        return
    if not lo <= default <= hi:
        errors.append(cpath + ".requestPolicy.default: Invalid value: must be within validRange")
    if hi > value:
        errors.append(cpath + ".requestPolicy.validRange.max: Invalid value: above the capacity")
    if (default - lo) % step or (hi - lo) % step:
        errors.append(cpath + ".requestPolicy: Invalid value: default and max must be min plus a "
                      "multiple of step")


def _validate_device(i, dev, errors):
    path = "spec.devices[%d]" % i
    if not isinstance(dev, dict):
        errors.append(path + ": must be an object")
        return
    name = dev.get("name", "")
    if not isinstance(name, str) or len(name) > 63 or not re.fullmatch(_LABEL, name):
        errors.append("%s.name: Invalid value: %r: a lowercase RFC 1123 label" % (path, name))
    attrs = dev.get("attributes") or {}
    caps = dev.get("capacity") or {}
    if len(attrs) + len(caps) > MAX_ATTRS_AND_CAPS:
        errors.append("%s: Too many: %d: must have at most %d attributes and capacities" %
                      (path, len(attrs) + len(caps), MAX_ATTRS_AND_CAPS))
    for key, val in attrs.items():
        apath = "%s.attributes[%s]" % (path, key)
        if not _qualified(key):
            errors.append(apath + ": Invalid value: not a qualified name")
        kinds = [k for k in ("int", "bool", "string", "version") if k in (val or {})]
        if len(kinds) != 1 or len(val) != 1:
            errors.append(apath + ": Invalid value: exactly one value must be specified")
            continue
        v = val[kinds[0]]
        if kinds[0] == "int" and (not isinstance(v, int) or isinstance(v, bool)):
            errors.append(apath + ".int: Invalid value: not an integer")
        if kinds[0] == "bool" and not isinstance(v, bool):
            errors.append(apath + ".bool: Invalid value: not a boolean")
        if kinds[0] in ("string", "version"):
            if not isinstance(v, str) or len(v) > 64:
                errors.append(apath + ".%s: Too long: may not be more than 64 bytes" % kinds[0])
            elif kinds[0] == "version" and not _SEMVER.fullmatch(v):
                errors.append(apath + ".version: Invalid value: %r: must be semver 2.0.0" % v)
    for key, cap in caps.items():
        cpath = "%s.capacity[%s]" % (path, key)
        if not _qualified(key):
            errors.append(cpath + ": Invalid value: not a qualified name")
        if not isinstance(cap, dict) or not _QUANTITY.fullmatch(str(cap.get("value", ""))):
            errors.append(cpath + ".value: Invalid value: not a quantity")
            continue
        if "requestPolicy" in cap and not dev.get("allowMultipleAllocations"):
            errors.append(cpath + ".requestPolicy: Forbidden: only with allowMultipleAllocations")
        _validate_policy(cpath, cap, errors)
    taints = dev.get("taints") or []
    if len(taints) > MAX_TAINTS:
        errors.append("%s.taints: Too many: %d: must have at most %d items" %
                      (path, len(taints), MAX_TAINTS))
    for k, t in enumerate(taints):
        if not _qualified(t.get("key", "")):
            errors.append("%s.taints[%d].key: Invalid value: not a qualified name" % (path, k))
        if t.get("effect") not in ("NoSchedule", "NoExecute", "None"):
            errors.append("%s.taints[%d].effect: Unsupported value: %r: supported values: "
                          "\"NoExecute\", \"NoSchedule\", \"None\"" % (path, k, t.get("effect")))


def validate_slice(obj, old, gates, now):
    """Drops the fields of disabled gates, fills defaults, raises 422 on invalid."""
    spec = obj.get("spec")
    name = obj.get("metadata", {}).get("name") or obj.get("metadata", {}).get("generateName", "")
    errors = []
    if not isinstance(spec, dict):
        raise _invalid("ResourceSlice", name, ["spec: Required value"])
    devices = spec.get("devices") or []
    if not isinstance(devices, list):
        raise _invalid("ResourceSlice", name, ["spec.devices: must be a list"])
    for dev in devices:
        if not isinstance(dev, dict):
            continue
        if not gates.get("DRADeviceTaints", True):
            dev.pop("taints", None)
        if not gates.get("DRAConsumableCapacity", True):
            dev.pop("allowMultipleAllocations", None)
            for cap in (dev.get("capacity") or {}).values():
                if isinstance(cap, dict):
                    cap.pop("requestPolicy", None)
        for t in dev.get("taints") or []:
            if isinstance(t, dict) and not t.get("timeAdded"):
                t["timeAdded"] = now
    driver = spec.get("driver", "")
    if not isinstance(driver, str) or len(driver) > 63 or not re.fullmatch(_SUBDOMAIN, driver):
        errors.append("spec.driver: Invalid value: %r: a lowercase DNS subdomain of at most "
                      "63 characters" % (driver,))
    pool = spec.get("pool") or {}
    pname = pool.get("name", "")
    if not pname or len(pname) > 253 or not all(re.fullmatch(_SUBDOMAIN, p)
                                                 for p in pname.split("/")):
        errors.append("spec.pool.name: Invalid value: %r" % (pname,))
    if not isinstance(pool.get("generation", 0), int) or pool.get("generation", 0) < 0:
        errors.append("spec.pool.generation: Invalid value: must be >= 0")
    count = pool.get("resourceSliceCount", 0)
    if not isinstance(count, int) or count <= 0:
        errors.append("spec.pool.resourceSliceCount: Invalid value: %r: must be greater than "
                      "zero" % (count,))
    selectors = [k for k in ("nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection")
                 if spec.get(k) not in (None, "", False)]
    if len(selectors) != 1:
        errors.append("spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, "
                      "`allNodes`, `perDeviceNodeSelection` is required")
    tainted = any(isinstance(d, dict) and d.get("taints") for d in devices)
    limit = MAX_DEVICES_WITH_TAINTS if tainted else MAX_DEVICES
    if len(devices) > limit:
        errors.append("spec.devices: Too many: %d: must have at most %d items" %
                      (len(devices), limit))
    seen = set()
    for i, dev in enumerate(devices):
        _validate_device(i, dev, errors)
        if isinstance(dev, dict):
            if dev.get("name") in seen:
                errors.append("spec.devices[%d].name: Duplicate value: %r" % (i, dev.get("name")))
            seen.add(dev.get("name"))
    if old is not None:
        ospec = old.get("spec", {})
        for field in ("driver", "nodeName"):
            if spec.get(field) != ospec.get(field):
                errors.append("spec.%s: Invalid value: field is immutable" % field)
        if pname != ospec.get("pool", {}).get("name"):
            errors.append("spec.pool.name: Invalid value: field is immutable")
    if errors:
        raise _invalid("ResourceSlice", name, errors)


def validate_claim(obj):
    spec = obj.get("spec")
    name = obj.get("metadata", {}).get("name", "")
    if not isinstance(spec, dict) or not isinstance(spec.get("devices", {}), dict):
        raise _invalid("ResourceClaim", name, ["spec.devices: Required value"])
    reqs = spec.get("devices", {}).get("requests") or []
    if len(reqs) > 32:
        raise _invalid("ResourceClaim", name, ["spec.devices.requests: Too many: %d: must have "
                                               "at most 32 items" % len(reqs)])


def validate(resource, obj, old, gates, now):
    if resource == "resourceslices":
        validate_slice(obj, old, gates, now)
    elif resource == "resourceclaims":
        validate_claim(obj)
