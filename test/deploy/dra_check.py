"""DRA-mode checks of test/deploy (strategy dra): the demo claims and pods in
demo/dra/ against what the shipped SimNodes publish, and the API calls of the
DRA code against the RBAC we grant. deploy_check.py dispatches to these."""
import copy
import glob
import os
import re
import tempfile

import dra_demo
import dra_objects
import probe_check
from rbac_rules import (EVENTS_CODE, LABELS_CODE, check_events_rbac, code_grants, daemonset_of, events_role,
                        load_docs as load, rbac_grants, read_verbs)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DRA_MANIFEST = os.path.join(ROOT, "manifests", "hcu-device-plugin-dra.yaml")
DRA_EXTENDED = os.path.join(ROOT, "manifests", "hcu-device-plugin-dra-extended-resource.yaml")
RBAC_VERBS_DRA = os.path.join(ROOT, "manifests", "rbac-verbs-dra.txt")
RBAC_VERBS_NODE_LABELS = os.path.join(ROOT, "manifests", "rbac-verbs-node-labels.txt")
DEMO_DIR = os.path.join(ROOT, "demo", "dra")
NODES = sorted(glob.glob(os.path.join(ROOT, "demo", "nodes", "*.yaml")))
# Where the DRA code lives: the library part and the daemon part (and the
# daemon's DRA wiring, wherever its file names say dra).
DRA_SOURCES = ["libhcudp/src/dra/*.cc", "libhcudp/src/dra/*.h", "hcu-dp-daemon/dra/*.cc",
               "hcu-dp-daemon/dra/*.h", "hcu-dp-daemon/*dra*.cc"]
# KubeClient path helpers of the DRA code -> the resource they name.
PATH_RESOURCES = {
    "ResourceSlicePath": "resourceslices.resource.k8s.io",
    "ResourceSlicesPath": "resourceslices.resource.k8s.io",
    "ResourceClaimPath": "resourceclaims.resource.k8s.io",
}
# kube_ops helpers (hcudp/kube_ops.h) -> the (resource, verb)s they use.
KUBE_OPS = {
    "GetNode": {("nodes", "get")}, "GetPod": {("pods", "get")}, "ListPods": {("pods", "list")},
    "PatchNodeAnnotations": {("nodes", "patch")}, "PatchPodAnnotations": {("pods", "patch")},
    "PatchNodeStatus": {("nodes/status", "patch")},
    "RemoveNodeAnnotationIfEquals": {("nodes", "get"), ("nodes", "patch")},
    "MergeConfigMapData": {("configmaps", "patch"), ("configmaps", "create")},
    "DeletePodWithUid": {("pods", "delete")},
}
# Path helpers of non-resource URLs that every authenticated client may GET
# (system:public-info-viewer): no grant of ours.
PUBLIC_PATHS = {"ServerVersionPath"}
CLIENT_METHODS = ("Get", "List", "Create", "Patch", "Update", "Delete", "Watch")


def own_grants():
    """The DRA mode's RBAC without the Events grants (which every strategy gets
    with events: true)."""
    return read_verbs(RBAC_VERBS_DRA) - code_grants(EVENTS_CODE)


# --- RBAC: the calls of the DRA code ---------------------------------------------

def code_calls(root=ROOT):
    """(resource, verb) pairs of the DRA code's API calls, and the calls it could
    not classify (file:line and text), from the source text."""
    calls, unknown = set(), []
    files = sorted({f for pattern in DRA_SOURCES for f in glob.glob(os.path.join(root, pattern))})
    # The path helper may be namespace-qualified (hdra::ResourceClaimPath).
    method = re.compile(r"(?:\.|->)\s*(" + "|".join(CLIENT_METHODS) + r")\s*\(\s*(?:\w+::)*(\w+)?\s*(\()?")
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # Comments and string literals say nothing about calls.
        code = re.sub(r"//[^\n]*|/\*.*?\*/", lambda c: "\n" * c.group(0).count("\n"), text,
                      flags=re.S)
        code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
        for m in method.finditer(code):
            verb, arg, paren = m.group(1).lower(), m.group(2), m.group(3)
            line = code.count("\n", 0, m.start()) + 1
            where = f"{os.path.relpath(path, root)}:{line}"
            if arg in PUBLIC_PATHS and paren and verb == "get":
                continue
            if arg in PATH_RESOURCES and paren:
                calls.add((PATH_RESOURCES[arg], verb))
            elif arg and arg.endswith("Path") and paren:
                unknown.append(f"{where}: {m.group(0).strip()} (path helper {arg} unknown here)")
            elif re.search(r"(client|kube)\w*\s*$", code[max(0, m.start() - 40):m.start()]):
                unknown.append(f"{where}: {m.group(0).strip()} (KubeClient call without a path helper)")
        for name, pairs in KUBE_OPS.items():
            if re.search(r"\b" + name + r"\s*\(", code):
                calls |= pairs
    return calls, unknown, files


def check_rbac(fx):
    want = read_verbs(RBAC_VERBS_DRA)
    docs = load(DRA_MANIFEST)
    got = rbac_grants(docs)
    fx.check(got == want, "DRA manifest grants exactly rbac-verbs-dra.txt: "
             f"missing {sorted(want - got)}, extra {sorted(got - want)}")
    design = {("resourceclaims.resource.k8s.io", "get"), ("nodes", "get")} | {
        ("resourceslices.resource.k8s.io", v)
        for v in ("get", "list", "watch", "create", "update", "delete")} | {
        ("events.events.k8s.io", v) for v in ("create", "patch")}
    fx.check(want == design, "rbac-verbs-dra.txt is DESIGN.md section 9's list, events create/patch "
             f"included (the DRA manifest passes EVENTS=true): {sorted(want ^ design)}")
    # Node labels (--node-labels=node, DESIGN.md section 10): the publisher's
    # calls, nodes get/patch, listed once for every strategy.
    labels = read_verbs(RBAC_VERBS_NODE_LABELS)
    fx.check(labels == {("nodes", "get"), ("nodes", "patch")} and labels == code_grants(LABELS_CODE),
             f"rbac-verbs-node-labels.txt is nodes get/patch, the label publisher's calls: {sorted(labels)}")
    # The events grant is the recorder's, in its namespace, for this DaemonSet.
    events = check_events_rbac(fx, "DRA manifest", docs)
    fx.check(events <= want, f"rbac-verbs-dra.txt lists the recorder's calls {sorted(events)}")
    calls, unknown, files = code_calls()
    fx.check(len(files) >= 10, f"{len(files)} DRA source files scanned")
    fx.check(not unknown, "every API call of the DRA code is classified" +
             "".join("\n     " + u for u in unknown))
    fx.check(calls <= want, "the DRA code calls nothing the RBAC does not grant: "
             f"{sorted(calls - want)}")
    core = {("resourceclaims.resource.k8s.io", "get")} | {
        ("resourceslices.resource.k8s.io", v) for v in ("list", "watch", "create", "update", "delete")}
    fx.check(core <= calls, "the scan finds the calls we know the code makes (Prepare's GET, the "
             f"slice sync): missing {sorted(core - calls)}")
    print(f"     granted, not found in the scanned DRA code: {sorted(want - calls - events)}")

    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    ds = by_kind["DaemonSet"][0]
    sa = ds["spec"]["template"]["spec"].get("serviceAccountName")
    fx.check(sa == "hcu-device-plugin-dra", f"DRA DaemonSet runs as hcu-device-plugin-dra (got {sa}), "
             "not the HAMi mode's account (another ClusterRole of the same name would clash)")
    fx.check([s["metadata"]["name"] for s in by_kind.get("ServiceAccount", [])] == [sa],
             "the DRA ServiceAccount is defined once")
    fx.check([(d["kind"], d["metadata"]["name"]) for d in by_kind.get("Role", []) + by_kind.get("RoleBinding", [])]
             == [("Role", events_role(sa)), ("RoleBinding", events_role(sa))],
             "DRA mode's only namespaced Role is the events one")
    for b in by_kind.get("ClusterRoleBinding", []):
        subjects = [(s["kind"], s["name"], s.get("namespace")) for s in b["subjects"]]
        fx.check(subjects == [("ServiceAccount", sa, "kube-system")] and
                 b["roleRef"]["name"] == "hcu-device-plugin-dra",
                 "the ClusterRoleBinding binds only the DRA ServiceAccount to its role")


def check_code_scan_can_fail(fx):
    """The scanner sees a call it does not know, and a call the RBAC lacks."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "libhcudp", "src", "dra"))
        with open(os.path.join(root, "libhcudp", "src", "dra", "x.cc"), "w") as f:
            f.write('// client.Patch(NodePath("a")) in a comment\n'
                    'auto a = client_.Patch(ResourceClaimPath(ns, n), p);\n'
                    'auto q = kube->Delete(hdra::ResourceSlicePath(s), o);\n'
                    'auto b = client->Get(SomeOtherPath(x));\n'
                    'auto c = client.List(path, opts);\n'
                    'auto n = GetNode(client, node);\n')
        calls, unknown, _ = code_calls(root)
    fx.check(calls == {("resourceclaims.resource.k8s.io", "patch"), ("nodes", "get"),
                       ("resourceslices.resource.k8s.io", "delete")} and
             len(unknown) == 2, f"the scanner classifies a planted patch and a qualified delete, and "
             "flags unknown calls "
             f"(calls {sorted(calls)}, unknown {unknown})")


# --- Demo claims against the shipped nodes ------------------------------------

def classes_of(docs):
    return {d["metadata"]["name"]: d["spec"] for d in docs if d.get("kind") == "DeviceClass"}


def claim_specs(docs):
    """(label, claim spec) of the claims and templates in docs."""
    out = []
    for d in docs:
        if d.get("kind") == "ResourceClaim":
            out.append((f"ResourceClaim/{d['metadata']['name']}", d["spec"]))
        elif d.get("kind") == "ResourceClaimTemplate":
            out.append((f"ResourceClaimTemplate/{d['metadata']['name']}", d["spec"]["spec"]))
    return out


def fits_on(classes, spec, nodes):
    """Names of the nodes one copy of the claim fits on."""
    return [n for n, devices in nodes.items()
            if dra_demo.allocate(dra_demo.Pool(devices), classes, spec) is not None]


def check_pods(fx, path, docs):
    claims = {(d["kind"], d["metadata"]["name"]): d for d in docs
              if d.get("kind") in ("ResourceClaim", "ResourceClaimTemplate")}
    for pod in (d for d in docs if d.get("kind") == "Pod"):
        spec, name = pod["spec"], f"{os.path.basename(path)} Pod/{pod['metadata']['name']}"
        pod_claims = {}
        for pc in spec.get("resourceClaims") or []:
            sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName") if k in pc]
            ok = set(pc) <= {"name", "resourceClaimName", "resourceClaimTemplateName"} and \
                len(sources) == 1
            kind = "ResourceClaim" if sources == ["resourceClaimName"] else "ResourceClaimTemplate"
            target = claims.get((kind, pc.get(sources[0]) if sources else None))
            fx.check(ok and target is not None, f"{name}: resourceClaims {pc} names one "
                     f"{kind} of the same file")
            if target is not None:
                cspec = target["spec"] if kind == "ResourceClaim" else target["spec"]["spec"]
                pod_claims[pc["name"]] = [r["name"] for r in cspec["devices"]["requests"]]
        used = set()
        for c in spec["containers"]:
            for cc in (c.get("resources") or {}).get("claims") or []:
                ok = set(cc) <= {"name", "request"} and cc.get("name") in pod_claims and \
                    ("request" not in cc or cc["request"] in pod_claims[cc["name"]])
                fx.check(ok, f"{name}: container {c['name']} claims {cc}: a claim (and request) "
                         "of the pod")
                used.add(cc.get("name"))
        fx.check(used == set(pod_claims), f"{name}: every pod claim is used by a container")


def check_demo(fx, hcuctl):
    shipped = load(DRA_MANIFEST)
    extended = load(DRA_EXTENDED)
    for d in shipped + extended:
        if d.get("apiVersion", "").startswith("resource.k8s.io/"):
            errors = dra_objects.validate(d)
            fx.check(not errors, f"{d['kind']}/{d['metadata']['name']}: strict resource.k8s.io/v1 "
                     "structure" + "".join("\n     " + e for e in errors))
    classes = classes_of(shipped)
    all_classes = dict(classes, **classes_of(extended))

    with tempfile.TemporaryDirectory() as tmp:
        nodes = {}
        for n in NODES:
            devices = dra_demo.node_devices(hcuctl, n, os.path.join(tmp, os.path.basename(n)))
            nodes[os.path.basename(n)] = devices
    everything = [d for ds in nodes.values() for d in ds]
    fx.check(len(nodes) >= 4 and len(everything) >= 20,
             f"{len(everything)} devices published by {len(nodes)} shipped SimNodes")
    attrs = {a for d in everything for a in d.attrs}
    values = {}
    for d in everything:
        for a, v in d.attrs.items():
            values.setdefault(a, set()).add(v)

    # The three main classes split every published device between them.
    for d in everything:
        owners = [c for c, spec in classes.items()
                  if all(dra_demo.selects(t, d) for t in dra_demo.selectors_of(spec))]
        if len(owners) != 1:
            fx.check(False, f"{d} is selected by exactly one class: {owners}")
            break
    else:
        fx.check(True, "every published device is in exactly one of "
                 f"{sorted(classes)}")
    for c, spec in all_classes.items():
        for terms in dra_demo.selectors_of(spec):
            for a, v in terms:
                fx.check(a is None or v in values.get(a, set()),
                         f"class {c}: {a} == {v!r} occurs in the published slices")

    claims = []
    for path in sorted(glob.glob(os.path.join(DEMO_DIR, "*.yaml"))):
        docs = load(path)
        for d in docs:
            if d.get("apiVersion", "").startswith("resource.k8s.io/"):
                errors = dra_objects.validate(d)
                fx.check(not errors, f"{os.path.basename(path)} {d['kind']}/{d['metadata']['name']}: "
                         "strict resource.k8s.io/v1 structure" + "".join("\n     " + e for e in errors))
        check_pods(fx, path, docs)
        claims += [(f"{os.path.basename(path)} {label}", spec) for label, spec in claim_specs(docs)]
        for pod in (d for d in docs if d.get("kind") == "Pod"):
            for c in pod["spec"]["containers"]:
                for res in (c.get("resources") or {}).get("limits") or {}:
                    ext = [n for n, s in all_classes.items() if s.get("extendedResourceName") == res]
                    fx.check(len(ext) == 1 and all_classes[ext[0]]["selectors"] ==
                             classes["dra.hygon.com"]["selectors"],
                             f"{os.path.basename(path)}: limit {res} is the extendedResourceName of "
                             f"one shipped class ({ext}), which selects whole cards")
    fx.check(len(claims) >= 4, f"{len(claims)} demo claims/templates")
    for label, spec in claims:
        refs = dra_demo.attribute_refs(spec, all_classes)
        fx.check(refs <= attrs, f"{label}: attributes {sorted(refs)} are published "
                 f"(unknown: {sorted(refs - attrs)})")
        for sub in [r.get("exactly") or {} for r in spec["devices"]["requests"]]:
            cls = sub.get("deviceClassName")
            if cls is None:
                continue
            fx.check(cls in all_classes, f"{label}: class {cls} is shipped")
            caps = dra_demo.capacity_refs({"devices": {"requests": [{"exactly": sub}]}})
            pool = [d for d in everything if cls in all_classes and all(
                dra_demo.selects(t, d) for t in dra_demo.selectors_of(all_classes[cls]))]
            fx.check(all(any(k in d.caps for d in pool) for k in caps),
                     f"{label}: capacities {sorted(caps)} exist on devices of class {cls}")
        where = fits_on(all_classes, spec, nodes)
        fx.check(bool(where), f"{label}: allocatable on a shipped SimNode ({', '.join(where)})")
    return nodes, all_classes, claims


def check_demo_semantics(fx, nodes, classes, claims):
    """What the demo comments promise, and that the checks above can fail."""
    by_label = {label.split(" ", 1)[1]: spec for label, spec in claims}
    vhcu = by_label.get("ResourceClaimTemplate/hcu-vhcu-30c-8g")
    card = [d for d in nodes["k100ai-8.yaml"] if d.name == "hcu-0000-09-00-0"]
    if fx.check(vhcu is not None and len(card) == 1, "the vHCU template and card 0 of k100ai-8"):
        pool = dra_demo.Pool(card)
        got = [dra_demo.allocate(pool, classes, vhcu) for _ in range(5)]
        first = got[0][0][2] if got[0] else {}
        fx.check(first.get("cores") == 30 and first.get("memory") == 8 << 30 and
                 first.get("slices") == 1,
                 f"a vHCU claim consumes cores 30, memory 8Gi and one slice: {first}")
        fx.check(all(got[:4]) and got[4] is None,
                 "four 30-CU vHCUs share one card, a fifth does not fit")
    whole = by_label.get("ResourceClaimTemplate/hcu-whole-card")
    if fx.check(whole is not None and len(card) == 1, "the whole-card template"):
        res = dra_demo.allocate(dra_demo.Pool(card), classes, whole)
        used = res[0][2] if res else {}
        fx.check(used.get("cores") == card[0].caps["cores"][0] and
                 used.get("memory") == card[0].caps["memory"][0],
                 f"a claim without capacity consumes all of the card (Prepare: a whole card): {used}")
    two = by_label.get("ResourceClaim/hcu-two-cards-one-island")
    if fx.check(two is not None, "the two-card claim"):
        res = dra_demo.allocate(dra_demo.Pool(nodes["k100ai-8.yaml"]), classes, two)
        islands = {d.attrs["dra.hygon.com/hslIsland"] for _, d, _ in res or []}
        fx.check(res is not None and len({d.name for _, d, _ in res}) == 2 and len(islands) == 1,
                 f"two different cards, one island: {res}")
        # The constraint matters: on two single-card islands it does not fit.
        split = [copy.copy(d) for d in nodes["k100ai-8.yaml"][:2]]
        split[1].attrs = dict(split[1].attrs, **{"dra.hygon.com/hslIsland": 99})
        fx.check(dra_demo.allocate(dra_demo.Pool(split), classes, two) is None,
                 "two cards on different islands do not satisfy the claim")
    for label, spec in claims:
        if "mig" not in label:
            continue
        where = fits_on(classes, spec, nodes)
        fx.check(where == ["bw-mig.yaml"], f"{label} fits only the MIG node: {where}")
        bad = copy.deepcopy(spec)
        sel = bad["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]
        sel["expression"] = sel["expression"].replace("4g.31gb", "9g.99gb")
        fx.check(not fits_on(classes, bad, nodes), "a MIG profile no node has fits nowhere")

    # Known-bad claims are rejected by the same checks.
    base = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x"},
            "spec": {"devices": {"requests": [{"name": "a", "exactly": {
                "deviceClassName": "dra.hygon.com", "capacity": {"requests": {"cores": 30}}}}]}}}
    typo = copy.deepcopy(base)
    typo["spec"]["devices"]["requests"][0]["exactly"]["capcity"] = \
        typo["spec"]["devices"]["requests"][0]["exactly"].pop("capacity")
    errors = dra_objects.validate(typo)
    fx.check(any("capcity" in e for e in errors), f"a misspelt field is named: {errors}")
    both = copy.deepcopy(base)
    both["spec"]["devices"]["requests"][0]["firstAvailable"] = []
    both["spec"]["devices"]["constraints"] = [{"requests": ["b"], "matchAttribute": "x/y"}]
    errors = dra_objects.validate(both)
    fx.check(any("exactly one of exactly" in e for e in errors) and any("'b'" in e for e in errors),
             f"exactly+firstAvailable and a constraint on an unknown request are errors: {errors}")
    fx.check(not dra_objects.validate(base), "the base claim is valid")
    big = copy.deepcopy(base["spec"])
    big["devices"]["requests"][0]["exactly"]["capacity"]["requests"]["cores"] = 121
    fx.check(not fits_on(classes, big, nodes), "a vHCU larger than any card fits nowhere")
    island = {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "dra.hygon.com"}}],
                          "constraints": [{"matchAttribute": "dra.hygon.com/hslIsle"}]}}
    refs = dra_demo.attribute_refs(island, classes)
    attrs = {a for ds in nodes.values() for d in ds for a in d.attrs}
    fx.check("dra.hygon.com/hslIsle" in refs - attrs, "a misspelt attribute is found unpublished")


# --- Host paths and the chart --------------------------------------------------

# mountPath -> (host path, writable, propagation) the DRA DaemonSet must have.
DRA_MOUNTS = {
    "/var/lib/kubelet/plugins": ("/var/lib/kubelet/plugins", True, "Bidirectional"),
    "/var/lib/kubelet/plugins_registry": ("/var/lib/kubelet/plugins_registry", True, None),
    "/var/run/cdi": ("/var/run/cdi", True, None),
    "/var/lib/hcu-device-plugin": ("/var/lib/hcu-device-plugin", True, None),
    "/dev": ("/dev", True, None),
    "/etc/vdev": ("/etc/vdev", True, None),
    "/etc/dmi_mig_config": ("/etc/dmi_mig_config", False, None),
    "/opt/hyhal": ("/opt/hyhal", False, None),
    # The host's /usr/local/hyhal is seen through this (the image links it),
    # never mounted itself: a hostPath of it is created empty where missing.
    "/host/usr/local": ("/usr/local", False, None),
}


def host_mounts(ds):
    """mountPath -> (host path or None, writable, propagation) of the first container."""
    pod = ds["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    out = {}
    for m in pod["containers"][0].get("volumeMounts", []):
        host = volumes.get(m["name"], {}).get("hostPath", {}).get("path")
        out[m["mountPath"]] = (host, not m.get("readOnly", False), m.get("mountPropagation"))
    return out


def check_host_mounts(fx, ds, label, kubelet="/var/lib/kubelet", run_probe=False):
    got = host_mounts(ds)
    for path, want in DRA_MOUNTS.items():
        if path.startswith("/var/lib/kubelet"):
            path = kubelet + path[len("/var/lib/kubelet"):]
            want = (path,) + want[1:]
        fx.check(got.get(path) == want, f"{label}: {path} mounted from the host as {want} "
                 f"(got {got.get(path)})")
    fx.check(not any(p.startswith(kubelet + "/device-plugins") or p.endswith("pod-resources")
                     for p in got), f"{label}: no device-plugin directories (one API per node)")
    c = ds["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    fx.check(env.get("RESOURCE_REGISTER_STRATEGY") == "dra", f"{label}: RESOURCE_REGISTER_STRATEGY=dra")
    fx.check(c.get("securityContext", {}).get("privileged") is True,
             f"{label}: privileged (Bidirectional propagation requires it)")
    fx.check(all("plugins" not in ((c.get(p) or {}).get("exec") or {}).get("command", [])
                 for p in ("startupProbe", "livenessProbe", "readinessProbe")),
             f"{label}: no `hcuctl plugins --check` probe (no device-plugin sockets in DRA mode)")
    probe_check.check_dra_probes(fx, label, c, run=run_probe)
    # The CDI hook lands where --cdi-hook-path (default) looks: the state volume.
    inits = ds["spec"]["template"]["spec"].get("initContainers", [])
    hook = [i for i in inits if "hcu-cdi-hook" in " ".join(i.get("command", []))]
    fx.check(len(hook) == 1 and any(m["name"] == "state" and
                                    m["mountPath"] == "/var/lib/hcu-device-plugin"
                                    for m in hook[0].get("volumeMounts", [])) and
             "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook" in " ".join(hook[0]["command"]),
             f"{label}: an init container puts hcu-cdi-hook at /var/lib/hcu-device-plugin/bin")


def check_helm(fx, render, equal_objects):
    """The chart with strategy=dra against the static manifests and the options."""
    static = load(DRA_MANIFEST)
    equal_objects(fx, "dra", render("strategy=dra"), static)
    equal_objects(fx, "dra+extendedResource", render("strategy=dra", "dra.extendedResource=true"),
                  static + load(DRA_EXTENDED))
    docs = render("strategy=dra")
    fx.check(rbac_grants(docs) == read_verbs(RBAC_VERBS_DRA), "chart dra RBAC == rbac-verbs-dra.txt")
    # Events and node labels on (deploy_dra_ops_rbac runs the daemon so):
    # exactly the two files, nothing beyond DESIGN.md sections 9 and 10.
    want = read_verbs(RBAC_VERBS_DRA) | read_verbs(RBAC_VERBS_NODE_LABELS)
    for sets in (("events=true", "nodeLabels.mode=node"),
                 ("events=true", "nodeLabels.mode=node", "rbac.create=true")):
        docs = render("strategy=dra", *sets)
        got = rbac_grants(docs)
        fx.check(got == want, f"chart dra {' '.join(sets)} grants exactly rbac-verbs-dra.txt + "
                 f"rbac-verbs-node-labels.txt: missing {sorted(want - got)}, extra {sorted(got - want)}")
        env = daemonset_of(docs)[2]
        fx.check(env.get("EVENTS") == "true" and env.get("NODE_LABELS") == "node",
                 f"chart dra {' '.join(sets)}: EVENTS=true and NODE_LABELS=node")
    docs = render("strategy=dra", "rbac.create=false")
    fx.check(not any(d["kind"] in ("ClusterRole", "ServiceAccount", "ClusterRoleBinding", "Role", "RoleBinding")
                     for d in docs), "rbac.create=false: no DRA RBAC objects")
    docs = render("strategy=dra", "kubeletDir=/var/lib/k0s/kubelet")
    ds = daemonset_of(docs)[0]
    check_host_mounts(fx, ds, "chart dra kubeletDir=/var/lib/k0s/kubelet", "/var/lib/k0s/kubelet")
    env = {e["name"]: e.get("value") for e in ds["spec"]["template"]["spec"]["containers"][0]["env"]}
    fx.check(env.get("KUBELET_PLUGINS_DIR") == "/var/lib/k0s/kubelet/plugins" and
             env.get("KUBELET_REGISTRY_DIR") == "/var/lib/k0s/kubelet/plugins_registry",
             "kubeletDir moves the DRA plugins and registry directories (env and mounts)")
    # Metrics off: every probe stays (none uses the metrics port).
    docs = render("strategy=dra", "metrics.enabled=false")
    probe_check.check_dra_probes(fx, "chart dra metrics.enabled=false",
                                 daemonset_of(docs)[1]["containers"][0], metrics=False)
    docs = render("strategy=dra", "dra.livenessProbe=null", "dra.startupProbe=null")
    c = daemonset_of(docs)[1]["containers"][0]
    fx.check("livenessProbe" not in c and "startupProbe" not in c,
             "dra.livenessProbe/startupProbe null: no such probe")
    # The device-plugin strategies keep `hcuctl plugins --check`.
    for s in ("mixed", "mig", "hami"):
        c = daemonset_of(render(f"strategy={s}"))[1]["containers"][0]
        fx.check(all((c.get(p) or {}).get("exec", {}).get("command") == ["hcuctl", "plugins", "--check"]
                     for p in ("startupProbe", "livenessProbe", "readinessProbe")),
                 f"{s}: startup and liveness probes are still `hcuctl plugins --check`")
    docs = render("strategy=dra", "nodeSelector.pool=hcu")
    spec = daemonset_of(docs)[1]
    fx.check(spec.get("nodeSelector") == {"pool": "hcu"} and "affinity" not in spec,
             "dra: a nodeSelector value replaces the default placement")
    for s in ("mixed", "mig", "hami"):
        kinds = {d["kind"] for d in render(f"strategy={s}", "dra.extendedResource=true")}
        fx.check("DeviceClass" not in kinds, f"{s}: no DeviceClass, even with dra.extendedResource")
