"""Helpers shared by deploy_check.py and dra_check.py: manifests as documents,
the grants of rendered Roles (one naming: <plural> in the core group, else
<plural>.<group>, as manifests/rbac-verbs*.txt), the grants the node-operations
code needs (read from its source), and the checks of the Events and node-label
RBAC of every strategy (doc/events.md, doc/labels.md)."""
import os
import re

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The kube client calls of the Events recorder and the label publisher. They
# call KubeClient directly (no kube_ops helpers), so their source names every
# request they make.
EVENTS_CODE = [os.path.join(ROOT, "libhcudp", "src", "ops", "events.cc")]
EVENTS_OPTIONS = os.path.join(ROOT, "libhcudp", "include", "hcudp", "node_events.h")
LABELS_CODE = [os.path.join(ROOT, "libhcudp", "src", "ops", "labels_publisher.cc")]
CLIENT_VERBS = {"Get": "get", "List": "list", "Create": "create", "Patch": "patch",
                "Update": "update", "Delete": "delete", "Watch": "watch"}
# KubeClient methods that send no request (the process's retry policy).
CLIENT_LOCAL = {"retry_policy"}


def events_role(sa):
    """The events Role and RoleBinding of the DaemonSet running as `sa`: named
    after it, so the DRA mode's (hcu-device-plugin-dra) never replaces the
    device plugin's (hcu-device-plugin)."""
    return sa + "-events"


def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def read_verbs(path):
    """The (resource, verb) pairs of a manifests/rbac-verbs*.txt file."""
    want = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                raise SystemExit(f"{path}:{n}: want 'resource verb', got {line!r}")
            want.add(tuple(parts))
    return want


def grant_resource(group, plural):
    return plural + ("." + group if group else "")


def rbac_grants(docs, only=None):
    """(resource, verb) pairs granted by the Roles/ClusterRoles in docs (only
    the ones named `only`, if given); the resource is <plural> in the core
    group, else <plural>.<group>. One group per rule, no wildcards."""
    grants = set()
    for d in docs:
        if d.get("kind") not in ("Role", "ClusterRole"):
            continue
        if only is not None and d["metadata"]["name"] != only:
            continue
        for rule in d.get("rules", []):
            groups = rule.get("apiGroups", [])
            if len(groups) != 1 or groups[0] == "*":
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: apiGroups {groups}, want one group")
            if rule.get("resourceNames") or rule.get("nonResourceURLs"):
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: unexpected rule {rule}")
            for res in rule.get("resources", []):
                for verb in rule.get("verbs", []):
                    if "*" in (res, verb):
                        raise ValueError(f"{d['kind']}/{d['metadata']['name']}: wildcard in {rule}")
                    grants.add((grant_resource(groups[0], res), verb))
    return grants


def code_grants(paths):
    """The (resource, verb) pairs the KubeClient calls in `paths` need. Each
    file must address one resource (a ResourcePath literal or NodePath) and
    call the client at least once; anything the scan cannot read is an error,
    so a new call cannot slip past the RBAC checks."""
    grants = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if "kube_ops.h" in text:
            raise SystemExit(f"{path}: calls kube_ops helpers, which this scan does not read")
        resources = set()
        for api, res in re.findall(r'ResourcePath\s+\w+\{"(/apis?(?:/[\w.]+)*)",\s*"([\w/]+)"', text):
            group = re.match(r"/apis/([\w.]+)/", api + "/")
            resources.add(grant_resource(group.group(1) if group else "", res))
        if re.search(r"\bNodePath\(", text):
            resources.add("nodes")
        methods = [m for m in re.findall(r"client_?->(\w+)\(", text) if m not in CLIENT_LOCAL]
        if len(resources) != 1 or not methods:
            raise SystemExit(f"{path}: want one resource and some client calls, got "
                             f"{sorted(resources)} and {methods}")
        unknown = sorted(set(methods) - set(CLIENT_VERBS))
        if unknown:
            raise SystemExit(f"{path}: client calls {unknown} have no known verb")
        (resource,) = resources
        grants |= {(resource, CLIENT_VERBS[m]) for m in set(methods)}
    return grants


def events_namespace():
    """The namespace the daemon writes Node events to (EventRecorder's default;
    the daemon does not change it)."""
    with open(EVENTS_OPTIONS, encoding="utf-8") as f:
        m = re.search(r'std::string namespace_name = "([\w-]+)";', f.read())
    if not m:
        raise SystemExit(f"{EVENTS_OPTIONS}: no default namespace_name")
    return m.group(1)


def daemonset_of(docs):
    """The DaemonSet of docs, its pod spec and its first container's env."""
    ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
    pod = ds["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}
    return ds, pod, env


def check_bindings(fx, what, docs):
    """Every binding in docs names only the DaemonSet's ServiceAccount."""
    ds, pod, _ = daemonset_of(docs)
    want = [("ServiceAccount", pod.get("serviceAccountName"), ds["metadata"]["namespace"])]
    for b in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        subjects = [(s["kind"], s["name"], s.get("namespace")) for s in b["subjects"]]
        fx.check(subjects == want, f"{what}: {b['kind']}/{b['metadata']['name']} binds only the "
                 f"DaemonSet's ServiceAccount {want} (got {subjects})")


def check_events_rbac(fx, what, docs):
    """Events on, with the chart's RBAC: the events Role grants exactly what the
    recorder calls, in the namespace it writes to, bound to the ServiceAccount
    the DaemonSet runs as, and EVENTS=true. Returns the recorder's grants."""
    want = code_grants(EVENTS_CODE)
    ns = events_namespace()
    ds, pod, env = daemonset_of(docs)
    sa = pod.get("serviceAccountName")
    role = events_role(str(sa))
    got = rbac_grants(docs, only=role)
    fx.check(got == want, f"{what}: Role {role} grants exactly the recorder's calls: "
             f"missing {sorted(want - got)}, extra {sorted(got - want)}")
    objs = [d for d in docs if d["metadata"]["name"] == role]
    fx.check(sorted(d["kind"] for d in objs) == ["Role", "RoleBinding"] and
             all(d["metadata"].get("namespace") == ns for d in objs),
             f"{what}: the events Role and RoleBinding live in namespace {ns} (where the daemon writes)")
    binding = [d for d in objs if d["kind"] == "RoleBinding"]
    subjects = [(s["kind"], s["name"], s.get("namespace")) for b in binding for s in b["subjects"]]
    fx.check(sa is not None and subjects == [("ServiceAccount", sa, ds["metadata"]["namespace"])] and
             all(b["roleRef"]["name"] == role for b in binding),
             f"{what}: the events RoleBinding binds the DaemonSet's ServiceAccount {sa} (got {subjects})")
    fx.check(sum(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa for d in docs) == 1,
             f"{what}: the ServiceAccount {sa} is defined once")
    fx.check(env.get("EVENTS") == "true", f"{what}: EVENTS=true (got {env.get('EVENTS')})")
    return want


def check_ops_rbac(fx, render, own):
    """The chart's node-label and Events options in every strategy. render(*sets,
    namespace=...) returns the documents of `helm template` with those --set
    values; own[strategy] is the strategy's RBAC without them."""
    event_grants = code_grants(EVENTS_CODE)
    label_grants = code_grants(LABELS_CODE)
    for s, grants in sorted(own.items()):
        docs = render(f"strategy={s}")
        check_events_rbac(fx, f"{s} default rendering", docs)
        check_bindings(fx, f"{s} default rendering", docs)
        fx.check(rbac_grants(docs) == grants | event_grants,
                 f"{s} default rendering: events grants and nothing more than the strategy's own")
        docs = render(f"strategy={s}", "events=false")
        ds, pod, env = daemonset_of(docs)
        fx.check("EVENTS" not in env and not any(d["metadata"]["name"].endswith("-events") for d in docs),
                 f"{s} events=false: no EVENTS and no events Role")
        fx.check(rbac_grants(docs) == grants, f"{s} events=false: only the strategy's own grants")
        if not grants:
            fx.check(not any(d["kind"] not in ("DaemonSet", "Service") for d in docs) and
                     "serviceAccountName" not in pod,
                     f"{s} events=false: only the DaemonSet and its metrics Service, default "
                     "ServiceAccount (no API calls)")

        docs = render(f"strategy={s}", "nodeLabels.mode=node")
        ds, pod, env = daemonset_of(docs)
        fx.check(rbac_grants(docs) == grants | label_grants | event_grants,
                 f"{s} nodeLabels.mode=node: the strategy's grants, the publisher's calls "
                 f"{sorted(label_grants)} and events")
        fx.check(env.get("NODE_LABELS") == "node" and
                 sum(d["kind"] == "ServiceAccount" for d in docs) == 1,
                 f"{s} nodeLabels.mode=node: NODE_LABELS=node, one ServiceAccount")
        check_bindings(fx, f"{s} nodeLabels.mode=node", docs)
        docs = render(f"strategy={s}", "nodeLabels.mode=nfd", "events=false",
                      "nodeLabels.nfdFeaturesDir=/etc/nfd/features.d")
        ds, pod, env = daemonset_of(docs)
        mounts = {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
        host = {v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
        fx.check(rbac_grants(docs) == grants, f"{s} nodeLabels.mode=nfd needs no RBAC of its own")
        fx.check(env.get("NODE_LABELS") == "nfd" and env.get("NFD_FEATURES_DIR") == "/etc/nfd/features.d" and
                 "/etc/nfd/features.d" in mounts and "/etc/nfd/features.d" in host,
                 f"{s} nodeLabels.mode=nfd mounts the host's features.d directory and passes it")
        docs = render(f"strategy={s}", "nodeLabels.mode=node", "rbac.create=false")
        ds, pod, env = daemonset_of(docs)
        fx.check(not rbac_grants(docs) and not any(d["kind"] == "ServiceAccount" for d in docs) and
                 (bool(grants) or "serviceAccountName" not in pod),
                 f"{s} rbac.create=false: no RBAC, no ServiceAccount"
                 + ("" if grants else ", the default one"))
        fx.check(env.get("EVENTS") == "auto",
                 f"{s} rbac.create=false: EVENTS=auto, so a pod without credentials still starts")
    for s in ("hami", "dra"):
        docs = render(f"strategy={s}", namespace="hcu-system")
        check_events_rbac(fx, f"{s} in namespace hcu-system", docs)
        check_bindings(fx, f"{s} in namespace hcu-system", docs)
