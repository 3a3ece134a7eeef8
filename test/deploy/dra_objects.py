"""Strict structure of the resource.k8s.io/v1 objects we ship (DeviceClass,
ResourceClaim, ResourceClaimTemplate): every field name and type, the
required fields and one-of rules, as kubernetes/api resource/v1/types.go has
them (reference/dra.md sections 3.4-3.5). The npm Kubernetes schemas that
test/deploy pins do not know resource.k8s.io, and the real API server drops
unknown fields with a warning only, so a misspelt field would otherwise pass
unnoticed and change what the claim asks for.

validate(obj) returns a list of error strings naming the field path.
"""
import re

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + r"(\." + _LABEL + r")*"
_C_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_QUANTITY = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE]|[nu])?")
_SUFFIX = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}

# Field name -> type. A type is a scalar name, an object type name, or a
# one-element list for a list of that type.
_META = {"name": "str", "generateName": "str", "namespace": "str",
         "labels": "map_str", "annotations": "map_str"}
_SELECTOR = {"cel": "CELDeviceSelector"}
_EXACT = {"deviceClassName": "str", "selectors": ["DeviceSelector"],
          "allocationMode": "allocation_mode", "count": "int", "adminAccess": "bool",
          "tolerations": ["DeviceToleration"], "capacity": "CapacityRequirements"}
TYPES = {
    "DeviceClass": {"apiVersion": "str", "kind": "str", "metadata": "ObjectMeta",
                    "spec": "DeviceClassSpec"},
    "ResourceClaim": {"apiVersion": "str", "kind": "str", "metadata": "ObjectMeta",
                      "spec": "ResourceClaimSpec"},
    "ResourceClaimTemplate": {"apiVersion": "str", "kind": "str", "metadata": "ObjectMeta",
                              "spec": "ResourceClaimTemplateSpec"},
    "ObjectMeta": _META,
    "ResourceClaimTemplateSpec": {"metadata": "ObjectMeta", "spec": "ResourceClaimSpec"},
    "DeviceClassSpec": {"selectors": ["DeviceSelector"], "config": ["DeviceClassConfiguration"],
                        "extendedResourceName": "str"},
    "DeviceClassConfiguration": {"opaque": "OpaqueDeviceConfiguration"},
    "ResourceClaimSpec": {"devices": "DeviceClaim"},
    "DeviceClaim": {"requests": ["DeviceRequest"], "constraints": ["DeviceConstraint"],
                    "config": ["DeviceClaimConfiguration"]},
    "DeviceRequest": {"name": "str", "exactly": "ExactDeviceRequest",
                      "firstAvailable": ["DeviceSubRequest"]},
    "ExactDeviceRequest": _EXACT,
    "DeviceSubRequest": dict(_EXACT, name="str"),
    "DeviceSelector": _SELECTOR,
    "CELDeviceSelector": {"expression": "str"},
    "DeviceConstraint": {"requests": ["str"], "matchAttribute": "qualified",
                         "distinctAttribute": "qualified"},
    "DeviceClaimConfiguration": {"requests": ["str"], "opaque": "OpaqueDeviceConfiguration"},
    "OpaqueDeviceConfiguration": {"driver": "str", "parameters": "any"},
    "DeviceToleration": {"key": "qualified", "operator": "toleration_operator", "value": "str",
                         "effect": "taint_effect", "tolerationSeconds": "int"},
    "CapacityRequirements": {"requests": "map_quantity"},
}
REQUIRED = {
    "DeviceClass": ["spec"], "ResourceClaim": ["spec"], "ResourceClaimTemplate": ["spec"],
    "ResourceClaimTemplateSpec": ["spec"], "DeviceRequest": ["name"],
    "ExactDeviceRequest": ["deviceClassName"], "DeviceSubRequest": ["name", "deviceClassName"],
    "DeviceSelector": ["cel"], "CELDeviceSelector": ["expression"],
    "OpaqueDeviceConfiguration": ["driver", "parameters"], "ObjectMeta": [],
}
# Exactly one of these fields.
ONE_OF = {
    "DeviceRequest": ("exactly", "firstAvailable"),
    "DeviceConstraint": ("matchAttribute", "distinctAttribute"),
}
KINDS = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
API_VERSION = "resource.k8s.io/v1"


def qualified(name):
    """A QualifiedName: a C identifier <= 32, or <DNS subdomain <= 63>/<C identifier <= 32>."""
    if not isinstance(name, str):
        return False
    if "/" in name:
        domain, ident = name.split("/", 1)
        return (len(domain) <= 63 and re.fullmatch(_SUBDOMAIN, domain) is not None and
                len(ident) <= 32 and re.fullmatch(_C_IDENT, ident) is not None)
    return len(name) <= 32 and re.fullmatch(_C_IDENT, name) is not None


def extended_resource_name(name):
    """<DNS subdomain, not *kubernetes.io>/<name>, as a pod's resources.limits key."""
    if not isinstance(name, str) or name.count("/") != 1:
        return False
    domain, rest = name.split("/")
    return (re.fullmatch(_SUBDOMAIN, domain) is not None and
            not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io")) and
            re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", rest) is not None and
            len(rest) <= 63)


def quantity(value):
    """An integer quantity as a number of units ("8Gi", "30", 30); None when not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"(\d+)(Ki|[kMGTPE]i?)?", str(value))
    if not m:
        return None
    return int(m.group(1)) * _SUFFIX[m.group(2) or ""]


def _scalar(kind, value, path, errors):
    ok = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "any": True,
        "qualified": qualified(value),
        "allocation_mode": value in ("ExactCount", "All"),
        "toleration_operator": value in ("Exists", "Equal"),
        "taint_effect": value in ("NoSchedule", "NoExecute", "None"),
        "map_str": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
        "map_quantity": isinstance(value, dict) and all(
            qualified(k) and (isinstance(v, int) or _QUANTITY.fullmatch(str(v)))
            for k, v in value.items()),
    }[kind]
    if not ok:
        errors.append(f"{path}: invalid {kind} value {value!r}")


def _walk(type_name, obj, path, errors):
    if type_name not in TYPES:
        _scalar(type_name, obj, path, errors)
        return
    if not isinstance(obj, dict):
        errors.append(f"{path}: want an object ({type_name}), got {type(obj).__name__}")
        return
    fields = TYPES[type_name]
    for key, value in obj.items():
        sub = f"{path}.{key}" if path else key
        if key not in fields:
            errors.append(f"{sub}: unknown field of {type_name} (known: {', '.join(sorted(fields))})")
            continue
        ftype = fields[key]
        if isinstance(ftype, list):
            if not isinstance(value, list):
                errors.append(f"{sub}: want a list")
                continue
            for i, item in enumerate(value):
                _walk(ftype[0], item, f"{sub}[{i}]", errors)
        else:
            _walk(ftype, value, sub, errors)
    for key in REQUIRED.get(type_name, []):
        if key not in obj:
            errors.append(f"{path or type_name}: required field {key} missing")
    if type_name in ONE_OF:
        present = [k for k in ONE_OF[type_name] if k in obj]
        if len(present) != 1:
            errors.append(f"{path or type_name}: exactly one of {', '.join(ONE_OF[type_name])} "
                          f"(got {present or 'none'})")


def _claim_spec_rules(spec, path, errors):
    """What the API server validates beyond field names."""
    devices = (spec or {}).get("devices") or {}
    names = []
    for i, req in enumerate(devices.get("requests") or []):
        name = req.get("name", "")
        if not re.fullmatch(_LABEL, str(name)) or len(str(name)) > 63:
            errors.append(f"{path}.devices.requests[{i}].name: {name!r} is not a DNS label")
        if name in names:
            errors.append(f"{path}.devices.requests[{i}].name: duplicate {name!r}")
        names.append(name)
        for sub in [req.get("exactly")] + list(req.get("firstAvailable") or []):
            if not isinstance(sub, dict):
                continue
            if sub.get("allocationMode", "ExactCount") == "ExactCount" and sub.get("count", 1) < 1:
                errors.append(f"{path}.devices.requests[{i}]: count must be >= 1")
            if sub.get("allocationMode") == "All" and "count" in sub:
                errors.append(f"{path}.devices.requests[{i}]: count with allocationMode All")
            for key, value in ((sub.get("capacity") or {}).get("requests") or {}).items():
                if quantity(value) is None:
                    errors.append(f"{path}.devices.requests[{i}].capacity.requests[{key}]: "
                                  f"{value!r} is not a whole quantity")
    for i, con in enumerate(devices.get("constraints") or []):
        for r in con.get("requests") or []:
            if r not in names:
                errors.append(f"{path}.devices.constraints[{i}].requests: {r!r} is no request "
                              f"of this claim ({names})")


def validate(obj):
    """Errors of one resource.k8s.io/v1 object (empty list: valid)."""
    if not isinstance(obj, dict):
        return ["not an object"]
    kind = obj.get("kind")
    if obj.get("apiVersion") != API_VERSION or kind not in KINDS:
        return [f"apiVersion/kind {obj.get('apiVersion')}/{kind}: want {API_VERSION} "
                f"{'|'.join(KINDS)}"]
    errors = []
    _walk(kind, obj, "", errors)
    name = (obj.get("metadata") or {}).get("name", "")
    if not name or not re.fullmatch(_SUBDOMAIN, name) or len(name) > 253:
        errors.append(f"metadata.name: {name!r} is not a DNS subdomain")
    if kind == "ResourceClaim":
        _claim_spec_rules(obj.get("spec"), "spec", errors)
    if kind == "ResourceClaimTemplate":
        _claim_spec_rules((obj.get("spec") or {}).get("spec"), "spec.spec", errors)
    if kind == "DeviceClass":
        ext = (obj.get("spec") or {}).get("extendedResourceName")
        if ext is not None and not extended_resource_name(ext):
            errors.append(f"spec.extendedResourceName: {ext!r} is not an extended resource name "
                          "(<domain outside kubernetes.io>/<name>)")
    return errors
