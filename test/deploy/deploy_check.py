#!/usr/bin/env python3
"""Checks of the deployment artefacts, one subcommand per CTest test.

  yamllint       manifests/, demo/ and the chart's values/Chart.yaml
  k8s-schema     static manifests, demo pods and chart renderings against the
                 Kubernetes API schemas (npm kubernetes-models)
  values-schema  charts/.../values.yaml against values.schema.json, and the
                 schema rejects what it must
  rbac           the HAMi manifest grants exactly manifests/rbac-verbs.txt;
                 mixed and MIG grant nothing
  host-mounts    the host files the plugin shares with host tools: the vdev
                 lock of libhydmi (/tmp/.dmi_virtual.lock) in vHCU-capable modes
  helm           helm lint; each strategy's default rendering equals the static
                 manifest (Helm-only labels aside); options render as documented
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

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHART = os.path.join(ROOT, "charts", "hcu-device-plugin")
MANIFESTS = {
    "mixed": os.path.join(ROOT, "manifests", "hcu-device-plugin.yaml"),
    "mig": os.path.join(ROOT, "manifests", "hcu-device-plugin-mig.yaml"),
    "hami": os.path.join(ROOT, "manifests", "hcu-device-plugin-hami.yaml"),
}
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


def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def load_docs_text(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


def helm_bin(tools):
    path = os.path.join(tools, "helm", "helm")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"helm not found at {path}: run scripts/install-ci-tools.sh")
    return path


def helm_template(tools, *sets, namespace="kube-system", expect_ok=True):
    cmd = [helm_bin(tools), "template", "hcu", CHART, "--namespace", namespace]
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


def rbac_grants(docs):
    """(resource, verb) pairs granted by the Roles/ClusterRoles in docs."""
    grants = set()
    for d in docs:
        if d.get("kind") not in ("Role", "ClusterRole"):
            continue
        for rule in d.get("rules", []):
            groups = rule.get("apiGroups", [])
            if groups != [""]:
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: apiGroups {groups}, want core only")
            if rule.get("resourceNames") or rule.get("nonResourceURLs"):
                raise ValueError(f"{d['kind']}/{d['metadata']['name']}: unexpected rule {rule}")
            for res in rule.get("resources", []):
                for verb in rule.get("verbs", []):
                    grants.add((res, verb))
    return grants


def read_rbac_verbs():
    want = set()
    with open(RBAC_VERBS, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                raise SystemExit(f"{RBAC_VERBS}:{n}: want 'resource verb', got {line!r}")
            want.add(tuple(parts))
    return want


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
    ("strategy=mig", "extraEnv[0].name=HCU_BACKEND", "extraEnv[0].value=host",
     "podAnnotations.a=b", "imagePullSecrets[0].name=regcred"),
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
    for path in sorted(glob.glob(os.path.join(ROOT, "demo", "pod-*.yaml"))):
        for i, d in enumerate(load_docs(path)):
            items.append((f"{os.path.relpath(path, ROOT)}#{i}", d))
    for variant in RENDER_VARIANTS:
        out = helm_template(args.tools, *variant).stdout
        for i, d in enumerate(load_docs_text(out)):
            items.append((f"helm[{','.join(variant)}]#{i}", d))
    fx.check(len(items) >= 20, f"{len(items)} objects collected")
    r = validate_objects(args.tools, items)
    print(r.stdout, end="")
    fx.check(r.returncode == 0, "every object matches its Kubernetes schema")

    # The validator must be able to fail: a known-bad DaemonSet is rejected.
    bad = copy.deepcopy(load_docs(MANIFESTS["mixed"])[0])
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
    ]
    for path, value, what in rejected:
        v = with_change(path, value)
        fx.check(not validator.is_valid(v), f"schema rejects {what}")
    return fx.exit()


# --- RBAC ------------------------------------------------------------------------

def cmd_rbac(args):
    fx = Failures()
    want = read_rbac_verbs()
    fx.check(("pods", "delete") not in want, "rbac-verbs.txt does not grant pods delete (opt-in only)")
    docs = load_docs(MANIFESTS["hami"])
    got = rbac_grants(docs)
    fx.check(got == want, "HAMi manifest grants exactly rbac-verbs.txt: "
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
        fx.check(kinds == ["DaemonSet", "Service"],
                 f"{mode}: only the DaemonSet and its metrics Service, no RBAC (got {kinds})")
        spec = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]
        fx.check("serviceAccountName" not in spec, f"{mode}: default ServiceAccount (no API calls)")
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
    for mode, want in (("mixed", True), ("hami", True), ("mig", False)):
        ds = [d for d in load_docs(MANIFESTS[mode]) if d["kind"] == "DaemonSet"][0]
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
    return fx.exit()


# --- Helm ------------------------------------------------------------------------

def yaml_dump(obj):
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False).splitlines()


def cmd_helm(args):
    fx = Failures()
    helm = helm_bin(args.tools)
    r = subprocess.run([helm, "lint", "--strict", CHART], capture_output=True, text=True)
    fx.check(r.returncode == 0, "helm lint --strict" + ("" if r.returncode == 0 else "\n" + r.stdout + r.stderr))
    for s in ("mixed", "mig", "hami"):
        rendered = {key_of(d): strip_helm_labels(d)
                    for d in load_docs_text(helm_template(args.tools, f"strategy={s}").stdout)}
        static = {key_of(d): d for d in load_docs(MANIFESTS[s])}
        fx.check(sorted(rendered) == sorted(static),
                 f"{s}: chart renders the static manifest's objects: chart {sorted(rendered)}, "
                 f"static {sorted(static)}")
        for k in sorted(set(rendered) & set(static)):
            same = rendered[k] == static[k]
            diff = "" if same else "\n" + "\n".join(difflib.unified_diff(
                yaml_dump(static[k]), yaml_dump(rendered[k]), "static", "chart", lineterm=""))
            fx.check(same, f"{s}: {k[0]}/{k[2]} equals the static manifest{diff}")

    # One version everywhere: CMake project, chart appVersion, manifests' image tag.
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\S+\s+VERSION\s+(\d+\.\d+\.\d+)", f.read())
    chart = load_docs(os.path.join(CHART, "Chart.yaml"))[0]
    fx.check(m is not None and chart.get("appVersion") == "v" + m.group(1),
             f"chart appVersion {chart.get('appVersion')} == v<CMake project version>")
    for s, path in sorted(MANIFESTS.items()):
        ds = [d for d in load_docs(path) if d["kind"] == "DaemonSet"][0]
        image = ds["spec"]["template"]["spec"]["containers"][0]["image"]
        fx.check(image.endswith(":" + str(chart.get("appVersion"))), f"{s}: image tag of {image} is the appVersion")

    # The chart's RBAC follows rbac-verbs.txt too, and the opt-in adds exactly pods delete.
    want = read_rbac_verbs()
    docs = load_docs_text(helm_template(args.tools, "strategy=hami").stdout)
    fx.check(rbac_grants(docs) == want, "chart hami RBAC == rbac-verbs.txt")
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", "rbac.evictUnaccountedPods=true").stdout)
    fx.check(rbac_grants(docs) == want | {("pods", "delete")},
             "rbac.evictUnaccountedPods=true adds exactly pods delete")
    ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
    fx.check(ds["spec"]["template"]["spec"]["containers"][0].get("args") == ["--evict-unaccounted-pods"],
             "rbac.evictUnaccountedPods=true passes --evict-unaccounted-pods")
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", namespace="hcu-system").stdout)
    role = [d for d in docs if d["kind"] == "Role"][0]
    binding = [d for d in docs if d["kind"] == "ClusterRoleBinding"][0]
    fx.check(role["metadata"]["namespace"] == "kube-system" and
             binding["subjects"][0]["namespace"] == "hcu-system",
             "another release namespace: ConfigMap Role stays in kube-system, subjects follow the release")

    # Options.
    docs = load_docs_text(helm_template(args.tools, "strategy=mixed", "deviceListStrategy=cdi",
                                        "kubeletDir=/var/lib/k0s/kubelet", "hostDev=full").stdout)
    c = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c["env"]}
    mounts = {m["mountPath"] for m in c["volumeMounts"]}
    fx.check(env.get("DEVICE_LIST_STRATEGY") == "cdi" and "/var/run/cdi" in mounts,
             "deviceListStrategy=cdi sets DEVICE_LIST_STRATEGY and mounts /var/run/cdi")
    fx.check(env.get("DEVICE_PLUGIN_PATH") == "/var/lib/k0s/kubelet/device-plugins/" and
             env.get("POD_RESOURCES_SOCKET") == "/var/lib/k0s/kubelet/pod-resources/kubelet.sock" and
             "/var/lib/k0s/kubelet/device-plugins" in mounts,
             "kubeletDir moves the socket directory, the pod-resources socket and their mounts")
    fx.check("/dev" in mounts and "/dev/dri" not in mounts, "hostDev=full mounts all of /dev")
    for s in ("mixed", "mig", "hami"):
        docs = load_docs_text(helm_template(args.tools, f"strategy={s}").stdout)
        fx.check(not any(d["kind"] in ("Role", "ClusterRole", "ServiceAccount") for d in docs) or s == "hami",
                 f"{s}: RBAC only with hami")
    docs = load_docs_text(helm_template(args.tools, "strategy=mig", "nodeSelector.pool=hcu").stdout)
    fx.check([d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "hcu"},
             "a nodeSelector value replaces the strategy's default")
    # Metrics: on by default (the static manifests carry them too); off drops the
    # variable, the port, the probe and the Service; the ServiceMonitor is opt-in.
    docs = load_docs_text(helm_template(args.tools, "strategy=mixed", "metrics.enabled=false").stdout)
    c = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]["containers"][0]
    fx.check(not any(d["kind"] == "Service" for d in docs) and "ports" not in c and
             "readinessProbe" not in c and all(e["name"] != "METRICS_ADDRESS" for e in c["env"]),
             "metrics.enabled=false renders no metrics variable, port, probe or Service")
    docs = load_docs_text(helm_template(args.tools, "strategy=hami", "metrics.port=9500",
                                        "metrics.serviceMonitor.enabled=true").stdout)
    c = [d for d in docs if d["kind"] == "DaemonSet"][0]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in c["env"]}
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    fx.check(env.get("METRICS_ADDRESS") == ":9500" and c["ports"][0]["containerPort"] == 9500 and
             len(monitors) == 1 and monitors[0]["spec"]["endpoints"][0]["port"] == "metrics",
             "metrics.port moves the address and the port; serviceMonitor.enabled adds a ServiceMonitor")
    r = helm_template(args.tools, "strategy=vhcu", expect_ok=False)
    fx.check(r.returncode != 0 and "strategy" in r.stderr, "helm refuses strategy=vhcu through the schema")
    r = helm_template(args.tools, "typo=1", expect_ok=False)
    fx.check(r.returncode != 0, "helm refuses an unknown top-level value")
    return fx.exit()


# --- Dockerfile ------------------------------------------------------------------

def dockerfile_instructions(text):
    """(instruction, arguments) with continuation lines joined, comments dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if cur and s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        word, _, rest = cur.partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def stage_packages(ins, stage):
    """apt packages installed in the given stage (0 = first FROM)."""
    packages, current = [], -1
    for i, a in ins:
        if i == "FROM":
            current += 1
        if i != "RUN" or current != stage:
            continue
        for seg in re.split(r"&&|;|\|\|", a):
            toks = seg.split()
            if "apt-get" in toks and "install" in toks:
                packages += [t for t in toks[toks.index("install") + 1:] if not t.startswith("-")]
    return packages


def check_runtime_libraries(fx, ins, build_dir):
    """Every shared library the built binaries need comes from a runtime-stage
    package (or what those pull in, or the base image's C/C++ runtime)."""
    runtime = stage_packages(ins, 1)
    r = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
                        "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"] + runtime,
                       capture_output=True, text=True)
    closure = set(runtime) | {"libc6", "libstdc++6", "libgcc-s1"}
    closure |= {ln.strip().split(":")[-1].strip().strip("<>") for ln in r.stdout.splitlines()}
    closure = {p.split(":")[0] for p in closure}
    binaries = [p for p in (os.path.join(build_dir, "libhcudp", "libhcudp.so"),
                            os.path.join(build_dir, "hcu-dp-daemon", "hcu-dp-daemon"),
                            os.path.join(build_dir, "hcuctl", "hcuctl")) if os.path.exists(p)]
    if not binaries:
        fx.skip(f"nothing built in {build_dir}: runtime libraries not checked")
        return
    needed = []  # (binary, soname, path as ldd prints it)
    for b in binaries:
        ldd = subprocess.run(["ldd", b], capture_output=True, text=True).stdout
        for line in ldd.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+)", line)
            if m and "libhcudp" not in m.group(1):
                needed.append((os.path.basename(b), m.group(1), m.group(2)))
    # One dpkg query for all paths (ldd's and the resolved ones: usrmerge).
    paths = sorted({p for _, _, p in needed} | {os.path.realpath(p) for _, _, p in needed})
    owners = {}
    out = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True).stdout
    for line in out.splitlines():
        pkg, _, path = line.partition(": ")
        owners[path.strip()] = pkg.split(":")[0].split(",")[0].strip()
    for binary, soname, path in needed:
        owner = owners.get(path) or owners.get(os.path.realpath(path)) or "?"
        fx.check(owner in closure, f"{binary} needs {soname} from {owner}: in the runtime image")


def cmd_dockerfile(args):
    fx = Failures()
    path = os.path.join(ROOT, "Dockerfile")
    with open(path, encoding="utf-8") as f:
        ins = dockerfile_instructions(f.read())
    froms = [a.split()[0] for i, a in ins if i == "FROM"]
    fx.check(froms and froms[0].startswith("debian:12") and froms[-1] == "debian:12-slim",
             f"build on debian:12, run on debian:12-slim (FROM {froms})")
    ignore = os.path.join(ROOT, ".dockerignore")
    ignored = open(ignore, encoding="utf-8").read().split() if os.path.exists(ignore) else []
    fx.check("build" in ignored or "build/" in ignored or "/build" in ignored,
             ".dockerignore keeps build/ out of the context")

    for i, a in ins:
        if i not in ("COPY", "ADD"):
            continue
        words = [w for w in a.split() if not w.startswith("--")]
        if any(w.startswith("--from") for w in a.split()):
            continue
        srcs = words[:-1]
        for src in srcs:
            fx.check(bool(glob.glob(os.path.join(ROOT, src))), f"COPY source {src} exists in the context")

    packages = []
    for i, a in ins:
        if i != "RUN":
            continue
        for seg in re.split(r"&&|;|\|\|", a):
            toks = seg.split()
            if "apt-get" in toks and "install" in toks:
                packages += [t for t in toks[toks.index("install") + 1:] if not t.startswith("-")]
    fx.check(len(packages) >= 10, f"{len(packages)} apt packages named")
    probe = subprocess.run(["apt-cache", "show", "--no-all-versions", "bash"], capture_output=True, text=True)
    if probe.returncode != 0:
        fx.skip("apt lists are empty here (apt-get update not run): package names not checked")
    else:
        # One query for all names: apt-cache prints the ones it knows.
        r = subprocess.run(["apt-cache", "show", "--no-all-versions"] + sorted(set(packages)),
                           capture_output=True, text=True)
        known = set(re.findall(r"^Package: (\S+)$", r.stdout, re.M))
        for p in sorted(set(packages)):
            fx.check(p in known, f"apt package {p} exists")

    if probe.returncode == 0 and args.build_dir:
        check_runtime_libraries(fx, ins, args.build_dir)

    labels = " ".join(a for i, a in ins if i == "LABEL")
    fx.check("org.opencontainers.image.version=" in labels, "LABEL org.opencontainers.image.version is set")
    env = " ".join(a for i, a in ins if i == "ENV")
    fx.check(re.search(r"LD_LIBRARY_PATH=\S*/opt/hyhal/lib", env) is not None,
             "LD_LIBRARY_PATH includes /opt/hyhal/lib (mounted from the node)")
    copies = " ".join(a for i, a in ins if i == "COPY")
    fx.check("/opt/hyhal" not in copies, "the image carries no /opt/hyhal")
    for binary in ("hcu-dp-daemon", "hcuctl"):
        fx.check(binary in copies, f"the runtime stage gets {binary}")
    return fx.exit()


def main():
    commands = {
        "yamllint": cmd_yamllint,
        "k8s-schema": cmd_k8s_schema,
        "values-schema": cmd_values_schema,
        "rbac": cmd_rbac,
        "helm": cmd_helm,
        "host-mounts": cmd_host_mounts,
        "dockerfile": cmd_dockerfile,
    }
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=sorted(commands))
    p.add_argument("--build-dir", default=os.environ.get("HCUDP_BUILD_DIR"), help="dockerfile: a build tree whose binaries' libraries to check")
    p.add_argument("--tools", default=os.environ.get("HCUDP_TOOLS_DIR", os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "hcudp-ci-tools")))
    args = p.parse_args()
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
