"""The devices a shipped SimNode publishes in DRA mode (what `hcuctl dra
slices -o json` prints, the daemon's own slice builder), and a small model of
the scheduler's allocation to check DeviceClasses and demo claims against them.

Supported subset (anything else is reported as unsupported, never ignored):
  CEL            conjunctions (&&) of `device.driver == "<s>"` and
                 `device.attributes["<domain>"].<name> == <"string"|int>`
                 (also the ["<name>"] form);
  requests       `exactly` with allocationMode ExactCount and count, and
                 `firstAvailable` (the first sub-request that fits);
  capacity       on allowMultipleAllocations devices every capacity is
                 consumed: the requested amount rounded up to the policy's
                 validRange step (over max: no fit), else the policy default,
                 else all of it; the capacity left is tracked across results
                 and claims; other devices are taken whole, once;
  constraints    matchAttribute over the listed requests (all when none);
  taints         a tainted device is never allocated (no toleration support).
"""
import json
import os
import re
import subprocess

from dra_objects import quantity

DRIVER = "dra.hygon.com"

_TERM = re.compile(r'\s*(?:device\.driver\s*==\s*"(?P<driver>[^"]*)"'
                   r'|device\.attributes\["(?P<domain>[^"]+)"\]'
                   r'(?:\.(?P<name>[A-Za-z_]\w*)|\["(?P<qname>[^"]+)"\])'
                   r'\s*==\s*(?:"(?P<str>[^"]*)"|(?P<int>-?\d+)))\s*')


class Unsupported(Exception):
    pass


class Device:
    def __init__(self, node, raw):
        self.node = node
        self.name = raw["name"]
        self.attrs = {}
        for key, val in (raw.get("attributes") or {}).items():
            qname = key if "/" in key else f"{DRIVER}/{key}"
            (kind, value), = val.items()
            self.attrs[qname] = value
        self.caps = {}
        for key, cap in (raw.get("capacity") or {}).items():
            self.caps[key] = (quantity(cap["value"]), cap.get("requestPolicy"))
        self.multi = bool(raw.get("allowMultipleAllocations"))
        self.tainted = bool(raw.get("taints"))

    def __repr__(self):
        return f"{self.node}/{self.name}"


def node_devices(hcuctl, node_file, host_root):
    """Devices of every slice `hcuctl dra slices -o json` prints for node_file."""
    node = "n-" + os.path.splitext(os.path.basename(node_file))[0]
    r = subprocess.run([hcuctl, "--backend=sim", f"--sim-node={node_file}",
                        f"--host-root={host_root}", "dra", "slices", "--node-name", node,
                        "-o", "json"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"hcuctl dra slices on {node_file}: exit {r.returncode}: {r.stderr}")
    out = json.loads(r.stdout)
    devices = []
    for item in out["items"]:
        if item["spec"]["driver"] != DRIVER:
            raise RuntimeError(f"{node_file}: slice of driver {item['spec']['driver']}")
        devices += [Device(node, d) for d in item["spec"].get("devices") or []]
    return devices


def compile_cel(expr):
    """[(attribute or None for the driver, value)] of a conjunction; Unsupported otherwise."""
    terms = []
    for part in expr.split("&&"):
        m = _TERM.fullmatch(part)
        if not m or "||" in part:
            raise Unsupported(f"CEL term {part.strip()!r} of {expr!r} is outside the checked subset")
        if m.group("driver") is not None:
            terms.append((None, m.group("driver")))
            continue
        name = m.group("name") or m.group("qname")
        qname = name if "/" in name else f"{m.group('domain')}/{name}"
        value = m.group("str") if m.group("str") is not None else int(m.group("int"))
        terms.append((qname, value))
    return terms


def selects(terms, device):
    for attr, value in terms:
        got = DRIVER if attr is None else device.attrs.get(attr)
        if got != value:
            return False
    return True


def selectors_of(spec):
    return [compile_cel(s["cel"]["expression"]) for s in spec.get("selectors") or []]


class Pool:
    """Devices of one node with the capacity each has left."""

    def __init__(self, devices):
        self.devices = devices
        self.left = {d.name: {k: v for k, (v, _) in d.caps.items()} for d in devices}
        self.taken = set()  # devices allocated whole

    def consumption(self, device, requests):
        """What one result on `device` would consume, or None when it does not fit."""
        if device.name in self.taken:
            return None
        want = {}
        for key, amount in (requests or {}).items():
            key = key.split("/", 1)[1] if key.startswith(DRIVER + "/") else key
            if key not in device.caps:
                return None
            want[key] = quantity(amount)
        if not device.multi:
            fits = all(device.caps[k][0] >= v for k, v in want.items())
            return {} if fits else None
        used = {}
        for key, (value, policy) in device.caps.items():
            rng = (policy or {}).get("validRange")
            if key in want:
                amount = want[key]
                if rng:
                    lo, step = quantity(rng.get("min", 0)), quantity(rng.get("step", 1))
                    hi = quantity(rng.get("max", value))
                    amount = max(amount, lo)
                    amount = lo + -(-(amount - lo) // step) * step
                    if amount > hi:
                        return None
            elif policy and "default" in policy:
                amount = quantity(policy["default"])
            else:
                amount = value
            if amount > self.left[device.name][key]:
                return None
            used[key] = amount
        return used

    def take(self, device, used):
        if not device.multi:
            self.taken.add(device.name)
        for key, amount in used.items():
            self.left[device.name][key] -= amount


def _candidates(pool, classes, sub, restrict):
    cls = classes.get(sub["deviceClassName"])
    if cls is None:
        raise Unsupported(f"deviceClassName {sub['deviceClassName']!r} is not a shipped class")
    if sub.get("allocationMode", "ExactCount") != "ExactCount":
        raise Unsupported("allocationMode All")
    if sub.get("tolerations") or sub.get("adminAccess"):
        raise Unsupported("tolerations / adminAccess")
    terms = selectors_of(cls) + selectors_of(sub)
    return [d for d in pool.devices
            if not d.tainted and all(selects(t, d) for t in terms) and restrict(d)]


def _allocate_request(pool, classes, req, restrict):
    """[(request name, device, consumed)] for one request, taken from pool; None: no fit."""
    subs = ([(req["name"], req["exactly"])] if "exactly" in req else
            [(f"{req['name']}/{s['name']}", s) for s in req["firstAvailable"]])
    for name, sub in subs:
        got = []
        for _ in range(sub.get("count", 1)):
            requests = (sub.get("capacity") or {}).get("requests")
            for d in _candidates(pool, classes, sub, restrict):
                used = pool.consumption(d, requests)
                if used is not None:
                    pool.take(d, used)
                    got.append((name, d, used))
                    break
            else:
                break
        if len(got) == sub.get("count", 1):
            return got
        for _, d, used in got:  # give back what a partial sub-request took
            pool.taken.discard(d.name)
            for key, amount in used.items():
                pool.left[d.name][key] += amount
    return None


def allocate(pool, classes, claim_spec):
    """Results [(request, device, consumed)] of a claim on pool (taken from it), or None."""
    devices = claim_spec.get("devices") or {}
    requests = devices.get("requests") or []
    match = []
    for con in devices.get("constraints") or []:
        if "matchAttribute" not in con:
            raise Unsupported("constraints other than matchAttribute")
        match.append((set(con.get("requests") or [r["name"] for r in requests]),
                      con["matchAttribute"]))
    # Values to try per constrained attribute: those any device of the pool has.
    choices = [[]]
    for _, attr in match:
        values = sorted({d.attrs[attr] for d in pool.devices if attr in d.attrs}, key=str)
        choices = [c + [v] for c in choices for v in values]
    for choice in choices:
        saved = ({k: dict(v) for k, v in pool.left.items()}, set(pool.taken))
        results = []
        for req in requests:
            pinned = [(attr, v) for (names, attr), v in zip(match, choice) if req["name"] in names]
            got = _allocate_request(pool, classes, req,
                                    lambda d: all(d.attrs.get(a) == v for a, v in pinned))
            if got is None:
                break
            results += got
        else:
            return results
        pool.left, pool.taken = saved
    return None


def attribute_refs(claim_spec, classes):
    """Qualified attribute names a claim (and its classes) use: CEL and constraints."""
    refs = set()
    devices = claim_spec.get("devices") or {}
    subs = []
    for req in devices.get("requests") or []:
        subs += [req["exactly"]] if "exactly" in req else list(req["firstAvailable"])
    for sub in subs:
        specs = [sub] + ([classes[sub["deviceClassName"]]]
                         if sub.get("deviceClassName") in classes else [])
        for spec in specs:
            for terms in selectors_of(spec):
                refs |= {a for a, _ in terms if a is not None}
    for con in devices.get("constraints") or []:
        refs |= {con[k] for k in ("matchAttribute", "distinctAttribute") if k in con}
    return refs


def capacity_refs(claim_spec):
    refs = set()
    for req in (claim_spec.get("devices") or {}).get("requests") or []:
        for sub in [req["exactly"]] if "exactly" in req else list(req["firstAvailable"]):
            refs |= set(((sub.get("capacity") or {}).get("requests") or {}))
    return {k.split("/", 1)[1] if k.startswith(DRIVER + "/") else k for k in refs}
