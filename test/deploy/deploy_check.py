#!/usr/bin/env python3
"""Checks of the deployment artefacts, one subcommand per CTest test.

  yamllint       manifests/, demo/ and the chart's values/Chart.yaml
  k8s-schema     static manifests, demo pods and chart renderings against the
                 Kubernetes API schemas (npm kubernetes-models); resource.k8s.io
                 objects against the strict field lists of dra_objects.py
  values-schema  charts/.../values.yaml against values.schema.json, and the
                 schema rejects what it must
  rbac           the HAMi manifest grants exactly manifests/rbac-verbs.txt
                 besides Events, the DRA manifest exactly
                 manifests/rbac-verbs-dra.txt (and the DRA code calls nothing
                 else); mixed and MIG grant Events only; every manifest's
                 Events Role grants exactly the recorder's calls (rbac_rules.py)
  host-mounts    the host files the plugin shares with host tools: the vdev
                 lock of libhydmi (/tmp/.dmi_virtual.lock) in vHCU-capable modes;
                 DRA mode's host paths and probes (the liveness command is run
                 with the built hcuctl: probe_check.py)
  helm           helm lint; each strategy's default rendering equals the static
                 manifest (Helm-only labels aside); options render as documented;
                 releases side by side own no object twice (release_check.py)
  alerts         the chart's PrometheusRule (promtool check + test rules) and
                 Grafana dashboard ConfigMap (alerts_check.py)
  dra-demo       demo/dra/ claims and pods: structure, classes, and that what
                 they ask for exists in (and fits) what `hcuctl dra slices`
                 publishes for the shipped SimNodes (needs a built hcuctl)
  dockerfile     cheap lint: COPY sources exist, apt packages exist, image facts

Usage: deploy_check.py <subcommand> [--tools DIR]
The tools directory is what scripts/install-ci-tools.sh prints.
Exit 0 = pass, 1 = fail, 77 = skipped (a prerequisite is missing here).
"""
import argparse
import copy
import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alerts_check  # noqa: E402
import dockerfile_check  # noqa: E402
import dra_check  # noqa: E402
import dra_objects  # noqa: E402
import placement_check  # noqa: E402
import release_check  # noqa: E402
from rbac_rules import (check_events_rbac, check_ops_rbac, daemonset_of, events_role,  # noqa: E402
                        load_docs, rbac_grants, read_verbs)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHART = os.path.join(ROOT, "charts", "hcu-device-plugin")
MANIFESTS = {
    "mixed": os.path.join(ROOT, "manifests", "hcu-device-plugin.yaml"),
    "mig": os.path.join(ROOT, "manifests", "hcu-device-plugin-mig.yaml"),
    "hami": os.path.join(ROOT, "manifests", "hcu-device-plugin-hami.yaml"),
    "dra": os.path.join(ROOT, "manifests", "hcu-device-plugin-dra.yaml"),
}
# Opt-in objects next to a strategy's manifest (not part of its default rendering).
EXTRA_MANIFESTS = [os.path.join(ROOT, "manifests", "hcu-device-plugin-dra-extended-resource.yaml")]
RBAC_VERBS = os.path.join(ROOT, "manifests", "rbac-verbs.txt")
HELM_ONLY_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
}
SKIP = 77


class Failures:
    """Collects failures so one run reports all of them."""

    def __init__(self):
        self.items = []
        self.skipped = []

    def check(self, ok, message):
        print(("ok   " if ok else "FAIL ") + message)
        if not ok:
            self.items.append(message)
        return ok

    def skip(self, message):
        """A check that could not run here: reported, and the test is SKIPPED, not passed."""
        print("skip " + message)
        self.skipped.append(message)

    def exit(self):
        total = len(self.items)
        if total:
            print(f"{total} check(s) failed")
            return 1
        if self.skipped:
            print(f"all checks that ran passed; {len(self.skipped)} could not run here")
            return 77
        print("all checks passed")
        return 0


def load_docs_text(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


def helm_bin(tools):
    path = os.path.join(tools, "helm", "helm")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"helm not found at {path}: run scripts/install-ci-tools.sh")
    return path


def helm_template(tools, *sets, namespace="kube-system", expect_ok=True, release="hcu-device-plugin"):
    """The default release unless `release` says otherwise: its names are the
    static manifests' (release_check.py)."""
    cmd = [helm_bin(tools), "template", release, CHART, "--namespace", namespace]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r


def key_of(obj):
    md = obj.get("metadata", {})
    return (obj.get("kind"), md.get("namespace", ""), md.get("name"))


def strip_helm_labels(obj):
    obj = copy.deepcopy(obj)
    for labels in (obj.get("metadata", {}).get("labels"),
                   obj.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")):
        if isinstance(labels, dict):
            for k in HELM_ONLY_LABELS:
                labels.pop(k, None)
    return obj


# --- yamllint ------------------------------------------------------------------

def cmd_yamllint(args):
    yl = shutil.which("yamllint")
    if not yl:
        print("yamllint not installed (scripts/install-deps.sh installs it)")
        return 1
    files = sorted(glob.glob(os.path.join(ROOT, "manifests", "*.yaml")) +
                   glob.glob(os.path.join(ROOT, "demo", "**", "*.yaml"), recursive=True) +
                   [os.path.join(CHART, "values.yaml"), os.path.join(CHART, "Chart.yaml")])
    cfg = os.path.join(ROOT, "test", "deploy", "yamllint.yaml")
    r = subprocess.run([yl, "-f", "parsable", "-c", cfg] + files, capture_output=True, text=True)
    print(r.stdout, end="")
    print(f"yamllint: {len(files)} files, exit {r.returncode}")
    return 1 if r.returncode != 0 else 0


# --- Kubernetes schema -----------------------------------------------------------

RENDER_VARIANTS = [
    ("strategy=mixed",),
    ("strategy=mig",),
    ("strategy=hami",),
    ("strategy=hami", "rbac.evictUnaccountedPods=true", "hami.resourceMultiple=true"),
    ("strategy=mixed", "hostDev=full", "deviceListStrategy=both", "kubeletDir=/var/lib/k0s/kubelet"),
    ("strategy=mixed", "nodeLabels.mode=node", "events=false"),
    ("strategy=mig", "nodeLabels.mode=nfd", "rbac.create=false"),
    ("strategy=hami", "nodeLabels.mode=node"),
    ("strategy=mig", "extraEnv[0].name=HCU_BACKEND", "extraEnv[0].value=host",
     "podAnnotations.a=b", "imagePullSecrets[0].name=regcred"),
    ("strategy=dra",),
    ("strategy=dra", "dra.extendedResource=true", "kubeletDir=/var/lib/k0s/kubelet",
     "extraEnv[0].name=HCU_BACKEND", "extraEnv[0].value=host", "podAnnotations.a=b"),
    ("strategy=dra", "nodeLabels.mode=node"),
    ("strategy=dra", "nodeLabels.mode=nfd", "events=false"),
]


def validate_objects(tools, items):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"source": s, "object": o} for s, o in items], f)
        path = f.name
    try:
        r = subprocess.run(["node", os.path.join(ROOT, "test", "deploy", "validate_k8s.cjs"),
                            os.path.join(tools, "npm"), path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    return r


def cmd_k8s_schema(args):
    fx = Failures()
    items = []
    for path in sorted(MANIFESTS.values()):
        for i, d in enumerate(load_docs(path)):
            items.append((f"{os.path.relpath(path, ROOT)}#{i}", d))
    for path in EXTRA_MANIFESTS + sorted(glob.glob(os.path.join(ROOT, "demo", "pod-*.yaml")) +
                                         glob.glob(os.path.join(ROOT, "demo", "dra", "*.yaml"))):
        for i, d in enumerate(load_docs(path)):
            items.append((f"{os.path.relpath(path, ROOT)}#{i}", d))
    for variant in RENDER_VARIANTS:
        out = helm_template(args.tools, *variant).stdout
        for i, d in enumerate(load_docs_text(out)):
            items.append((f"helm[{','.join(variant)}]#{i}", d))
    fx.check(len(items) >= 20, f"{len(items)} objects collected")
    # The pinned npm schemas have no resource.k8s.io: those go to dra_objects.
    dra_items = [(s, o) for s, o in items if str(o.get("apiVersion")).startswith("resource.k8s.io/")]
    items = [(s, o) for s, o in items if not str(o.get("apiVersion")).startswith("resource.k8s.io/")]
    fx.check(len(dra_items) >= 12, f"{len(dra_items)} resource.k8s.io objects collected")
    for source, obj in dra_items:
        errors = dra_objects.validate(obj)
        fx.check(not errors, f"{source} {obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
                 + "".join("\n     " + e for e in errors))
    r = validate_objects(args.tools, items)
    print(r.stdout, end="")
    fx.check(r.returncode == 0, "every object matches its Kubernetes schema")

    # The validator must be able to fail: a known-bad DaemonSet is rejected.
    bad = copy.deepcopy(daemonset_of(load_docs(MANIFESTS["mixed"]))[0])
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "Sometimes"
    del bad["spec"]["selector"]
    r = validate_objects(args.tools, [("known-bad", bad)])
    fx.check(r.returncode == 1 and "selector" in r.stdout and "imagePullPolicy" in r.stdout,
             "a DaemonSet without selector and with a bad pull policy is rejected")
    return fx.exit()


# --- values.schema.json ------------------------------------------------------------

def cmd_values_schema(args):
    fx = Failures()
    with open(os.path.join(CHART, "values.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    fx.check(schema.get("$schema", "").startswith("http://json-schema.org/draft-07/"), "schema is draft-07")
    fx.check(schema.get("additionalProperties") is False, "top level is strict (additionalProperties false)")
    validator = jsonschema.Draft7Validator(schema)
    values = load_docs(os.path.join(CHART, "values.yaml"))[0]
    errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(values)]
    fx.check(not errors, "values.yaml is valid" + ("".join("\n     " + e for e in errors)))
    fx.check(set(values) == set(schema["properties"]),
             "values.yaml sets every key the schema declares (and no other): "
             f"missing {sorted(set(schema['properties']) - set(values))}, "
             f"undeclared {sorted(set(values) - set(schema['properties']))}")

    def with_change(path, value):
        v = copy.deepcopy(values)
        node = v
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        return v

    rejected = [
        (("bogus",), 1, "unknown top-level key"),
        (("strategy",), "vhcu", "strategy outside mixed|mig|hami"),
        (("policy",), 3, "policy 3"),
        (("policy",), "1", "policy as a string"),
        (("pulse",), -1, "negative pulse"),
        (("logSeverity",), "DEBUG", "unknown log severity"),
        (("logLevel",), 11, "log level above 10"),
        (("hami", "deviceSplitCount"), 0, "device split count 0"),
        (("hami", "typo"), True, "unknown key under hami"),
        (("image", "pullPolicy"), "Sometimes", "bad pull policy"),
        (("image", "registry"), "x", "unknown key under image"),
        (("deviceListStrategy",), "envvar", "unknown device list strategy"),
        (("kubeletDir",), "var/lib/kubelet", "relative kubelet dir"),
        (("hostDev",), "all", "hostDev outside narrow|full"),
        (("rbac", "evictUnaccountedPods"), "yes", "non-boolean rbac flag"),
        (("nodeLabels", "mode"), "on", "nodeLabels.mode outside off|nfd|node"),
        (("nodeLabels", "nfdFeaturesDir"), "features.d", "relative NFD directory"),
        (("events",), "yes", "non-boolean events"),
        (("dra", "extendedResource"), "yes", "non-boolean dra.extendedResource"),
        (("dra", "deviceClasses"), "no", "non-boolean dra.deviceClasses"),
        (("dra", "driverName"), "x.example.com", "unknown key under dra"),
    ]
    for path, value, what in rejected:
        v = with_change(path, value)
        fx.check(not validator.is_valid(v), f"schema rejects {what}")
    return fx.exit()


# --- RBAC ------------------------------------------------------------------------

def cmd_rbac(args):
    fx = Failures()
    want = read_verbs(RBAC_VERBS)
    fx.check(("pods", "delete") not in want, "rbac-verbs.txt does not grant pods delete (opt-in only)")
    docs = load_docs(MANIFESTS["hami"])
    check_events_rbac(fx, "HAMi manifest", docs)
    docs = [d for d in docs if d["metadata"]["name"] != events_role("hcu-device-plugin")]
    got = rbac_grants(docs)
    fx.check(got == want, "HAMi manifest grants exactly rbac-verbs.txt besides Events: "
             f"missing {sorted(want - got)}, extra {sorted(got - want)}")

    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    ds = by_kind["DaemonSet"][0]
    sa = ds["spec"]["template"]["spec"].get("serviceAccountName")
    fx.check(sa == "hcu-device-plugin", f"DaemonSet runs as ServiceAccount hcu-device-plugin (got {sa})")
    fx.check([s["metadata"]["name"] for s in by_kind.get("ServiceAccount", [])] == [sa],
             "the ServiceAccount is defined once")
    for role in by_kind.get("ClusterRole", []):
        fx.check(all("configmaps" not in r.get("resources", []) for r in role["rules"]),
                 "ConfigMaps are not granted cluster-wide")
    roles = by_kind.get("Role", [])
    fx.check(len(roles) == 1 and roles[0]["metadata"]["namespace"] == "kube-system",
             "ConfigMap rights are a Role in kube-system")
    for b in by_kind.get("ClusterRoleBinding", []) + by_kind.get("RoleBinding", []):
        subjects = [(s["kind"], s["name"], s.get("namespace")) for s in b["subjects"]]
        fx.check(subjects == [("ServiceAccount", sa, "kube-system")],
                 f"{b['kind']} binds only the plugin's ServiceAccount")
    # The vHCU journal (VhcuManager intents) must be a writable host path:
    # the root filesystem is read-only and the journal must outlive the pod.
    pod = ds["spec"]["template"]["spec"]
    journal = [v for v in pod["volumes"]
               if v.get("hostPath", {}).get("path") == "/var/lib/hcu-device-plugin"]
    mounts = [m for c in pod["containers"] for m in c.get("volumeMounts", [])
              if journal and m["name"] == journal[0]["name"]]
    fx.check(len(journal) == 1 and len(mounts) == 1 and not mounts[0].get("readOnly", False)
             and mounts[0]["mountPath"] == "/var/lib/hcu-device-plugin",
             "HAMi mounts /var/lib/hcu-device-plugin read-write from the host (vHCU journal)")
    with open(MANIFESTS["hami"], encoding="utf-8") as f:
        text = f.read()
    fx.check(re.search(r'#\s+verbs: \["delete"\]', text) is not None,
             "the opt-in pods delete rule is present, commented out")

    for mode in ("mixed", "mig"):
        docs = load_docs(MANIFESTS[mode])
        kinds = sorted(d["kind"] for d in docs)
        fx.check(kinds == ["DaemonSet", "Role", "RoleBinding", "Service", "ServiceAccount"],
                 f"{mode}: a DaemonSet, its metrics Service and, for Events only, a ServiceAccount, Role "
                 f"and RoleBinding (got {kinds})")
        events = check_events_rbac(fx, f"{mode} manifest", docs)
        fx.check(rbac_grants(docs) == events, f"{mode}: no grant besides Events")

    # DRA mode: DESIGN.md section 9 (with Events), and every call the DRA code makes.
    dra_check.check_rbac(fx)
    dra_check.check_code_scan_can_fail(fx)
    return fx.exit()


# --- Host mounts -------------------------------------------------------------------

DMI_VDEV_LOCK = "/tmp/.dmi_virtual.lock"


def lock_mounts(ds):
    """(volume, mount) pairs that put a host file at libhydmi's vdev lock path."""
    pod = ds["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    return [(volumes.get(m["name"]), m) for c in pod["containers"]
            for m in c.get("volumeMounts", []) if m["mountPath"] == DMI_VDEV_LOCK]


def cmd_host_mounts(args):
    # libhydmi serialises vdev create/destroy with a lock file in /tmp
    # (reference/hcu-hardware.md §1.9). The pod's own /tmp would not share it
    # with hy-smi on the host, so vHCU-capable modes mount the host's file.
    fx = Failures()
    for mode, want in (("mixed", True), ("hami", True), ("mig", False), ("dra", True)):
        ds = daemonset_of(load_docs(MANIFESTS[mode]))[0]
        found = lock_mounts(ds)
        if not want:
            fx.check(not found, f"{mode}: no vdev lock mount (MIG mode makes no vdevs)")
            continue
        ok = (len(found) == 1 and found[0][0] is not None and
              found[0][0].get("hostPath", {}).get("path") == DMI_VDEV_LOCK and
              found[0][0]["hostPath"].get("type") == "FileOrCreate" and
              not found[0][1].get("readOnly", False))
        fx.check(ok, f"{mode}: mounts the host's {DMI_VDEV_LOCK} (hostPath, FileOrCreate, "
                     f"read-write) at {DMI_VDEV_LOCK}; got {found}")
    ds = daemonset_of(load_docs(MANIFESTS["dra"]))[0]
    dra_check.check_host_mounts(fx, ds, "dra", run_probe=True)
    return fx.exit()


# --- Helm ------------------------------------------------------------------------

def yaml_dump(obj):
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False).splitlines()


def equal_objects(fx, label, chart_docs, static_docs):
    """The chart's rendering holds exactly the static manifest's objects."""
    rendered = {key_of(d): strip_helm_labels(d) for d in chart_docs}
    static = {key_of(d): d for d in static_docs}
    fx.check(sorted(rendered) == sorted(static),
             f"{label}: chart renders the static manifest's objects: chart {sorted(rendered)}, "
             f"static {sorted(static)}")
    for k in sorted(set(rendered) & set(static)):
        same = rendered[k] == static[k]
        diff = "" if same else "\n" + "\n".join(difflib.unified_diff(
            yaml_dump(static[k]), yaml_dump(rendered[k]), "static", "chart", lineterm=""))
        fx.check(same, f"{label}: {k[0]}/{k[2]} equals the static manifest{diff}")


def check_metrics(fx, what, docs, port=9400):
    """Metrics on (DESIGN.md section 10, every strategy): METRICS_ADDRESS=:port, a
    containerPort named metrics, a headless Service selecting the DaemonSet's
    pods on that port, and no probe on it: it listens on the pod's network,
    where slow clients could hold it (issue 25), so readiness is an exec probe
    (check_readiness)."""
    ds, pod, env = daemonset_of(docs)
    c = pod["containers"][0]
    ports = [p for p in c.get("ports", []) if p.get("name") == "metrics"]
    fx.check(env.get("METRICS_ADDRESS") == f":{port}" and len(ports) == 1 and
             ports[0]["containerPort"] == port,
             f"{what}: METRICS_ADDRESS=:{port} and containerPort metrics {port} (got "
             f"{env.get('METRICS_ADDRESS')}, {ports})")
    check_readiness(fx, what, c)
    services = [d for d in docs if d["kind"] == "Service"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    fx.check(len(services) == 1 and services[0]["spec"].get("clusterIP") == "None" and
             services[0]["metadata"]["namespace"] == ds["metadata"]["namespace"] and
             all(labels.get(k) == v for k, v in services[0]["spec"]["selector"].items()) and
             [(p["name"], p["port"], p["targetPort"]) for p in services[0]["spec"]["ports"]] ==
             [("metrics", port, "metrics")],
             f"{what}: one headless Service selects the DaemonSet's pods on the metrics port")


def check_readiness(fx, what, container):
    """Readiness execs the strategy's socket check (the liveness probe's
    command), with or without metrics; no probe of the container is HTTP."""
    ready = container.get("readinessProbe") or {}
    live = (container.get("livenessProbe") or {}).get("exec", {}).get("command")
    fx.check("exec" in ready and ready["exec"].get("command") == live and live,
             f"{what}: readiness execs the liveness probe's socket check {live} (got {ready})")
    http = [k for k in ("startupProbe", "livenessProbe", "readinessProbe")
            if "httpGet" in (container.get(k) or {}) or "tcpSocket" in (container.get(k) or {})]
    fx.check(not http, f"{what}: no probe uses a network port (got {http})")


def cmd_helm(args):
    fx = Failures()
    helm = helm_bin(args.tools)
    r = subprocess.run([helm, "lint", "--strict", CHART], capture_output=True, text=True)
    fx.check(r.returncode == 0, "helm lint --strict" + ("" if r.returncode == 0 else "\n" + r.stdout + r.stderr))
    for s in ("mixed", "mig", "hami"):
        equal_objects(fx, s, load_docs_text(helm_template(args.tools, f"strategy={s}").stdout),
                      load_docs(MANIFESTS[s]))

    # One version everywhere: CMake project, chart appVersion, manifests' image tag.
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\S+\s+VERSION\s+(\d+\.\d+\.\d+)", f.read())
    chart = load_docs(os.path.join(CHART, "Chart.yaml"))[0]
    fx.check(m is not None and chart.get("appVersion") == "v" + m.group(1),
             f"chart appVersion {chart.get('appVersion')} == v<CMake project version>")
    for s, path in sorted(MANIFESTS.items()):
        ds = daemonset_of(load_docs(path))[0]
        image = ds["spec"]["template"]["spec"]["containers"][0]["image"]
        fx.check(image.endswith(":" + str(chart.get("appVersion"))), f"{s}: image tag of {image} is the appVersion")

    # The chart's RBAC follows rbac-verbs.txt too, and the opt-in adds exactly pods delete.
    want = read_verbs(RBAC_VERBS)
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", "events=false").stdout)
    fx.check(rbac_grants(docs) == want, "chart hami RBAC (events=false) == rbac-verbs.txt")
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", "events=false",
                                        "rbac.evictUnaccountedPods=true").stdout)
    fx.check(rbac_grants(docs) == want | {("pods", "delete")},
             "rbac.evictUnaccountedPods=true adds exactly pods delete")
    ds = daemonset_of(docs)[0]
    fx.check(ds["spec"]["template"]["spec"]["containers"][0].get("args") == ["--evict-unaccounted-pods"],
             "rbac.evictUnaccountedPods=true passes --evict-unaccounted-pods")
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", namespace="hcu-system").stdout)
    role = [d for d in docs if d["kind"] == "Role" and d["metadata"]["name"] == "hcu-device-plugin"][0]
    binding = [d for d in docs if d["kind"] == "ClusterRoleBinding"][0]
    fx.check(role["metadata"]["namespace"] == "kube-system" and
             binding["subjects"][0]["namespace"] == "hcu-system",
             "another release namespace: ConfigMap Role stays in kube-system, subjects follow the release")

    # Options.
    docs = load_docs_text(helm_template(args.tools, "strategy=mixed", "deviceListStrategy=cdi",
                                        "kubeletDir=/var/lib/k0s/kubelet", "hostDev=full").stdout)
    c = daemonset_of(docs)[1]["containers"][0]
    env = {e["name"]: e.get("value") for e in c["env"]}
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    fx.check(env.get("DEVICE_LIST_STRATEGY") == "cdi" and "/var/run/cdi" in mounts,
             "deviceListStrategy=cdi sets DEVICE_LIST_STRATEGY and mounts /var/run/cdi")
    hook = [i for i in daemonset_of(docs)[1].get("initContainers", [])
            if "hcu-cdi-hook" in " ".join(i.get("command", []))]
    fx.check(len(hook) == 1 and "/var/lib/hcu-device-plugin/bin" in mounts and
             "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook" in " ".join(hook[0]["command"]),
             "deviceListStrategy=cdi puts hcu-cdi-hook on the host where --cdi-hook-path looks")
    # The device-plugin CDI spec carries /usr/local/hyhal as the DRA ones do:
    # the daemon sees the host's tree through /host/usr/local (the image's
    # /usr/local/hyhal links there); no DaemonSet names /usr/local/hyhal as a
    # hostPath, which containerd and CRI-O would create empty.
    ds_volumes = {v["name"]: v for v in daemonset_of(docs)[1]["volumes"]}
    fx.check("/host/usr/local" in mounts and
             ds_volumes.get("host-usr-local", {}).get("hostPath") ==
             {"path": "/usr/local", "type": "Directory"},
             "deviceListStrategy=cdi mounts the host's /usr/local (type Directory) at /host/usr/local")
    for values in (("strategy=mixed", "deviceListStrategy=both"), ("strategy=dra",)):
        vdocs = load_docs_text(helm_template(args.tools, *values).stdout)
        created = [v["hostPath"]["path"] for d in vdocs if d.get("kind") == "DaemonSet"
                   for v in d["spec"]["template"]["spec"].get("volumes", [])
                   if "hostPath" in v and v["hostPath"]["path"].startswith("/usr/local")
                   and v["hostPath"].get("type") != "Directory"]
        fx.check(not created, f"{' '.join(values)}: no hostPath under /usr/local that the runtime "
                 f"would create (got {created})")
    # kubelet's device-plugin directory is the constant /var/lib/kubelet/device-plugins/
    # whatever its --root-dir (kubelet-contract.md section 1, kubernetes#120626);
    # pod-resources follows the root directory.
    paths = {v["name"]: v["hostPath"]["path"] for v in daemonset_of(docs)[1]["volumes"]
             if "hostPath" in v}
    fx.check("DEVICE_PLUGIN_PATH" not in env and paths.get("device-plugin") ==
             "/var/lib/kubelet/device-plugins" and "/var/lib/kubelet/device-plugins" in mounts,
             "kubeletDir keeps the device-plugin socket directory at kubelet's fixed "
             f"/var/lib/kubelet/device-plugins (got DEVICE_PLUGIN_PATH={env.get('DEVICE_PLUGIN_PATH')}, "
             f"hostPath {paths.get('device-plugin')})")
    fx.check(env.get("POD_RESOURCES_SOCKET") == "/var/lib/k0s/kubelet/pod-resources/kubelet.sock" and
             paths.get("pod-resources") == "/var/lib/k0s/kubelet/pod-resources" and
             "/var/lib/k0s/kubelet/pod-resources" in mounts,
             "kubeletDir moves the pod-resources socket and its mount")
    fx.check("/dev" in mounts and "/dev/dri" not in mounts, "hostDev=full mounts all of /dev")
    dra_check.check_helm(fx, lambda *sets: load_docs_text(helm_template(args.tools, *sets).stdout),
                         equal_objects)
    docs = load_docs_text(helm_template(args.tools, "strategy=mig", "nodeSelector.pool=hcu").stdout)
    fx.check(daemonset_of(docs)[1]["nodeSelector"] == {"pool": "hcu"},
             "a nodeSelector value replaces the strategy's default")
    check_ops_rbac(fx, lambda *sets, namespace="kube-system": load_docs_text(
        helm_template(args.tools, *sets, namespace=namespace).stdout),
        {"mixed": set(), "mig": set(), "hami": want, "dra": dra_check.own_grants()})
    # Metrics: on by default in every strategy (the static manifests carry them
    # too); off drops the variable, the port, the probe and the Service; the
    # ServiceMonitor is opt-in.
    for s in sorted(MANIFESTS):
        check_metrics(fx, f"{s} default rendering",
                      load_docs_text(helm_template(args.tools, f"strategy={s}").stdout))
    for s in ("mixed", "dra"):
        docs = load_docs_text(helm_template(args.tools, f"strategy={s}", "metrics.enabled=false").stdout)
        c = daemonset_of(docs)[1]["containers"][0]
        fx.check(not any(d["kind"] == "Service" for d in docs) and "ports" not in c and
                 all(e["name"] != "METRICS_ADDRESS" for e in c["env"]),
                 f"{s} metrics.enabled=false renders no metrics variable, port or Service")
        check_readiness(fx, f"{s} metrics.enabled=false", c)
    for s in ("hami", "dra"):
        docs = load_docs_text(helm_template(args.tools, f"strategy={s}", "metrics.port=9500",
                                            "metrics.serviceMonitor.enabled=true").stdout)
        check_metrics(fx, f"{s} metrics.port=9500", docs, port=9500)
        monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
        fx.check(len(monitors) == 1 and monitors[0]["spec"]["endpoints"][0]["port"] == "metrics",
                 f"{s}: serviceMonitor.enabled adds a ServiceMonitor on the metrics port")
    release_check.check_releases(
        fx, lambda release, *sets: load_docs_text(helm_template(args.tools, *sets, release=release).stdout),
        {s: load_docs(p) for s, p in MANIFESTS.items()})
    r = helm_template(args.tools, "strategy=dra", "dra.extendedResource=maybe", expect_ok=False)
    fx.check(r.returncode != 0, "helm refuses a non-boolean dra.extendedResource")
    r = helm_template(args.tools, "strategy=vhcu", expect_ok=False)
    fx.check(r.returncode != 0 and "strategy" in r.stderr, "helm refuses strategy=vhcu through the schema")
    r = helm_template(args.tools, "typo=1", expect_ok=False)
    fx.check(r.returncode != 0, "helm refuses an unknown top-level value")
    return fx.exit()


# --- DRA demo ----------------------------------------------------------------------

def cmd_dra_demo(args):
    fx = Failures()
    hcuctl = os.path.join(args.build_dir or "", "hcuctl", "hcuctl")
    if not args.build_dir or not os.access(hcuctl, os.X_OK):
        print(f"hcuctl not built at {hcuctl} (set HCUDP_BUILD_DIR or --build-dir)")
        return SKIP
    nodes, classes, claims = dra_check.check_demo(fx, hcuctl)
    dra_check.check_demo_semantics(fx, nodes, classes, claims)
    return fx.exit()


def main():
    commands = {
        "yamllint": cmd_yamllint,
        "k8s-schema": cmd_k8s_schema,
        "values-schema": cmd_values_schema,
        "rbac": cmd_rbac,
        "helm": cmd_helm,
        "host-mounts": cmd_host_mounts,
        "dockerfile": lambda args: dockerfile_check.cmd_dockerfile(args, Failures()),
        "dra-demo": cmd_dra_demo,
        "placement": lambda args: placement_check.cmd_placement(
            Failures(), lambda *sets: load_docs_text(helm_template(args.tools, *sets).stdout),
            lambda strategy: load_docs(MANIFESTS[strategy])),
        "alerts": lambda args: alerts_check.cmd_alerts(
            Failures(), lambda *sets: load_docs_text(helm_template(args.tools, *sets).stdout)),
    }
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=sorted(commands))
    p.add_argument("--build-dir", default=os.environ.get("HCUDP_BUILD_DIR"),
                   help="dockerfile: a build tree whose binaries' libraries to check; "
                        "dra-demo: the build tree of hcuctl")
    p.add_argument("--tools", default=os.environ.get("HCUDP_TOOLS_DIR", os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "hcudp-ci-tools")))
    args = p.parse_args()
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
