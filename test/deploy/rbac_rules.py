"""RBAC helpers of deploy_check.py: the grants of rendered Roles, the grants
the node-operations code needs (read from its source), and the checks of the
Events and node-label RBAC (doc/events.md, doc/labels.md)."""
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The kube client calls of the Events recorder and the label publisher. They
# call KubeClient directly (no kube_ops helpers), so their source names every
# request they make.
EVENTS_CODE = [os.path.join(ROOT, "libhcudp", "src", "ops", "events.cc")]
EVENTS_OPTIONS = os.path.join(ROOT, "libhcudp", "include", "hcudp", "node_events.h")
LABELS_CODE = [os.path.join(ROOT, "libhcudp", "src", "ops", "labels_publisher.cc")]
CLIENT_VERBS = {"Get": "get", "List": "list", "Create": "create", "Patch": "patch",
                "Delete": "delete", "Watch": "watch"}
EVENTS_ROLE = "hcu-device-plugin-events"


def rbac_grants(docs, only=None):
    """(resource, verb) pairs granted by the Roles/ClusterRoles in docs (only
    those named `only`, if given); a resource of another group than core is
    "<group>/<resource>"."""
    grants = set()
    for d in docs:
        if d.get("kind") not in ("Role", "ClusterRole"):
            continue
        if only is not None and d["metadata"]["name"] != only:
            continue
        for rule in d.get("rules", []):
            groups = rule.get("apiGroups", [])
            if groups not in ([""], ["events.k8s.io"]):
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: apiGroups {groups}, "
                                 "want core or events.k8s.io only")
            prefix = "" if groups == [""] else groups[0] + "/"
            if rule.get("resourceNames") or rule.get("nonResourceURLs"):
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: unexpected rule {rule}")
            for res in rule.get("resources", []):
                for verb in rule.get("verbs", []):
                    grants.add((prefix + res, verb))
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
            resources.add((group.group(1) + "/" if group else "") + res)
        if re.search(r"\bNodePath\(", text):
            resources.add("nodes")
        methods = re.findall(r"client_?->(\w+)\(", text)
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
    ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
    pod = ds["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    return ds, pod, env


def check_events_rbac(fx, what, docs):
    """Events on, with the chart's RBAC: the events Role grants exactly what the
    recorder calls, in the namespace it writes to, bound to the ServiceAccount
    the DaemonSet runs as, and EVENTS=true."""
    want = code_grants(EVENTS_CODE)
    ns = events_namespace()
    ds, pod, env = daemonset_of(docs)
    sa = pod.get("serviceAccountName")
    got = rbac_grants(docs, only=EVENTS_ROLE)
    fx.check(got == want, f"{what}: Role {EVENTS_ROLE} grants exactly the recorder's calls: "
             f"missing {sorted(want - got)}, extra {sorted(got - want)}")
    objs = [d for d in docs if d["metadata"]["name"] == EVENTS_ROLE]
    fx.check(sorted(d["kind"] for d in objs) == ["Role", "RoleBinding"] and
             all(d["metadata"].get("namespace") == ns for d in objs),
             f"{what}: the events Role and RoleBinding live in namespace {ns} (where the daemon writes)")
    binding = [d for d in objs if d["kind"] == "RoleBinding"]
    subjects = [(s["kind"], s["name"], s.get("namespace")) for b in binding for s in b["subjects"]]
    fx.check(sa is not None and subjects == [("ServiceAccount", sa, ds["metadata"]["namespace"])],
             f"{what}: the events RoleBinding binds the DaemonSet's ServiceAccount {sa} (got {subjects})")
    fx.check(sum(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa for d in docs) == 1,
             f"{what}: the ServiceAccount {sa} is defined once")
    fx.check(env.get("EVENTS") == "true", f"{what}: EVENTS=true (got {env.get('EVENTS')})")
    return want


def check_ops_rbac(fx, render, hami_verbs):
    """The chart's node-label and Events options; render(*sets) returns the
    documents of `helm template` with those --set values."""
    event_grants = code_grants(EVENTS_CODE)
    label_grants = code_grants(LABELS_CODE)
    for s in ("mixed", "mig", "hami"):
        docs = render(f"strategy={s}")
        check_events_rbac(fx, f"{s} default rendering", docs)
        other = hami_verbs if s == "hami" else set()
        fx.check(rbac_grants(docs) == other | event_grants,
                 f"{s} default rendering: events grants and nothing more than the strategy's own")
        docs = render(f"strategy={s}", "events=false")
        ds, pod, env = daemonset_of(docs)
        fx.check("EVENTS" not in env and not rbac_grants(docs, only=EVENTS_ROLE),
                 f"{s} events=false: no EVENTS and no events Role")
        if s != "hami":
            fx.check(not any(d["kind"] != "DaemonSet" for d in docs) and "serviceAccountName" not in pod,
                     f"{s} events=false: only the DaemonSet, default ServiceAccount (no API calls)")
    docs = render("strategy=hami", namespace="hcu-system")
    check_events_rbac(fx, "hami in namespace hcu-system", docs)

    docs = render("strategy=mixed", "nodeLabels.mode=node", "events=false")
    ds, pod, env = daemonset_of(docs)
    fx.check(rbac_grants(docs) == label_grants,
             f"nodeLabels.mode=node grants exactly the publisher's calls {sorted(label_grants)}")
    fx.check(pod.get("serviceAccountName") == "hcu-device-plugin" and
             any(d["kind"] == "ServiceAccount" for d in docs) and env.get("NODE_LABELS") == "node",
             "nodeLabels.mode=node: a ServiceAccount, used by the DaemonSet, and NODE_LABELS=node")
    docs = render("strategy=hami", "nodeLabels.mode=node")
    fx.check(rbac_grants(docs) == hami_verbs | label_grants | event_grants,
             "hami + node labels + events: exactly the union of the three")
    fx.check(sum(d["kind"] == "ServiceAccount" for d in docs) == 1, "hami + ops: one ServiceAccount")
    docs = render("strategy=mixed", "nodeLabels.mode=nfd", "events=false",
                  "nodeLabels.nfdFeaturesDir=/etc/nfd/features.d")
    ds, pod, env = daemonset_of(docs)
    mounts = {m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    host = {v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    fx.check(not rbac_grants(docs) and "serviceAccountName" not in pod,
             "nodeLabels.mode=nfd needs no RBAC and no ServiceAccount")
    fx.check(env.get("NODE_LABELS") == "nfd" and env.get("NFD_FEATURES_DIR") == "/etc/nfd/features.d" and
             "/etc/nfd/features.d" in mounts and "/etc/nfd/features.d" in host,
             "nodeLabels.mode=nfd mounts the host's features.d directory and passes it")
    for s in ("mixed", "hami"):
        docs = render(f"strategy={s}", "nodeLabels.mode=node", "rbac.create=false")
        ds, pod, env = daemonset_of(docs)
        fx.check(not rbac_grants(docs) and (s == "hami" or "serviceAccountName" not in pod),
                 f"{s} rbac.create=false: no RBAC for node labels or events")
        fx.check(env.get("EVENTS") == "auto",
                 f"{s} rbac.create=false: EVENTS=auto, so a pod without credentials still starts")
