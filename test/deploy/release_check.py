"""Helm releases side by side (deploy_check.py helm): two releases of the chart
never render the same object, so Helm installs both (it refuses an object
another release owns), and `helm uninstall` of one never deletes the other's.

The default release of each strategy (named hcu-device-plugin or after the
strategy's DaemonSet) renders the static manifests' names, which are distinct
per strategy; any other release prefixes every name with "<release>-". Only
the DeviceClasses keep their API names: a second DRA release turns them off
(dra.deviceClasses=false)."""
import itertools

from rbac_rules import daemonset_of

DEFAULT_RELEASES = {
    "mixed": "hcu-device-plugin",
    "mig": "hcu-device-plugin-mig",
    "hami": "hcu-device-plugin-hami",
    "dra": "hcu-device-plugin-dra",
}
# Every optional object on: node-label ClusterRoles, events Roles, metrics
# Service, ServiceMonitor, PrometheusRule and dashboard, the opt-in DeviceClass.
ALL_ON = ("nodeLabels.mode=node", "events=true", "metrics.serviceMonitor.enabled=true",
          "metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true",
          "dra.extendedResource=true")
SHARED_KINDS = {"DeviceClass"}


def key_of(obj):
    md = obj.get("metadata", {})
    return (obj.get("kind"), md.get("namespace", ""), md.get("name"))


def duplicates(*renderings):
    """(kind, namespace, name) keys that more than one rendering holds."""
    seen, dups = {}, set()
    for i, docs in enumerate(renderings):
        for k in {key_of(d) for d in docs}:
            if k in seen and seen[k] != i:
                dups.add(k)
            seen.setdefault(k, i)
    return sorted(dups)


def check_references(fx, what, docs):
    """Every name the rendering refers to is an object of the same rendering:
    bindings' roles and ServiceAccounts, the pods' ServiceAccount, and the
    Service's selector (the DaemonSet's pod labels)."""
    keys = {key_of(d) for d in docs}
    ds, pod, _ = daemonset_of(docs)
    ns = ds["metadata"]["namespace"]
    sa = pod.get("serviceAccountName")
    if sa is not None:
        fx.check(("ServiceAccount", ns, sa) in keys, f"{what}: the pods' ServiceAccount {sa} is rendered")
    for b in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        ref = b["roleRef"]
        role_key = (ref["kind"], b["metadata"].get("namespace", "") if ref["kind"] == "Role" else "",
                    ref["name"])
        subjects = [("ServiceAccount", s.get("namespace"), s["name"]) for s in b["subjects"]]
        fx.check(role_key in keys and all(s in keys for s in subjects),
                 f"{what}: {b['kind']}/{b['metadata']['name']} binds rendered objects "
                 f"({role_key}, {subjects})")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    fx.check(all(ds["spec"]["selector"]["matchLabels"].get(k) == v for k, v in labels.items()
                 if k in ds["spec"]["selector"]["matchLabels"]) and
             ds["spec"]["selector"]["matchLabels"]["name"] == labels["name"],
             f"{what}: the DaemonSet selects its own pod template")
    for svc in (d for d in docs if d["kind"] == "Service"):
        fx.check(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
                 f"{what}: Service/{svc['metadata']['name']} selects the DaemonSet's pods")


def check_releases(fx, render, static):
    """render(release, *sets) returns the documents of `helm template`;
    static[strategy] the documents of the strategy's manifest."""
    # The detector can fail: one release rendered twice duplicates everything.
    once = render("hcu-device-plugin", "strategy=mixed")
    fx.check(len(duplicates(once, once)) == len(once) > 0,
             "the duplicate check finds every object of a release rendered twice")

    # The four default releases side by side (doc/deploy.md installs them so).
    defaults = {s: render(r, f"strategy={s}", *ALL_ON) for s, r in sorted(DEFAULT_RELEASES.items())}
    dups = duplicates(*defaults.values())
    fx.check(not dups, f"the default releases of mixed, mig, hami and dra own no object twice: {dups}")
    for a, b in itertools.combinations(sorted(defaults), 2):
        fx.check(not duplicates(defaults[a], defaults[b]), f"default releases {a} + {b}: no shared object")
    # The static manifests, applied together, share nothing either (deleting
    # one mode's manifest never deletes another mode's objects).
    dups = duplicates(*static.values())
    fx.check(not dups, f"the static manifests share no object: {dups}")

    # The case: releases under other names, of two strategies.
    for (ra, sa), (rb, sb) in ((("hcu", "mixed"), ("hcu-mig", "mig")),
                               (("hcu", "mixed"), ("hcu-hami", "hami")),
                               (("hcu-device-plugin", "mixed"), ("hcu-dra", "dra"))):
        a = render(ra, f"strategy={sa}", *ALL_ON)
        b = render(rb, f"strategy={sb}", *ALL_ON)
        fx.check(not duplicates(a, b), f"release {ra} ({sa}) + release {rb} ({sb}): no shared object: "
                 f"{duplicates(a, b)}")

    # One strategy twice, e.g. for two node pools: the second release's
    # names all carry its prefix, its references stay inside it, and with
    # dra.deviceClasses=false a second DRA release shares nothing.
    for s in sorted(DEFAULT_RELEASES):
        first = defaults[s]
        second = render("pool-b", f"strategy={s}", *ALL_ON, "dra.deviceClasses=false")
        fx.check(not duplicates(first, second), f"{s} twice (default + pool-b): no shared object: "
                 f"{duplicates(first, second)}")
        unprefixed = [key_of(d) for d in second if not d["metadata"]["name"].startswith("pool-b-")]
        fx.check(not unprefixed, f"{s} release pool-b: every name starts with pool-b- (got {unprefixed})")
        ds, pod, _ = daemonset_of(second)
        fx.check(ds["spec"]["selector"]["matchLabels"]["name"].startswith("pool-b-"),
                 f"{s} release pool-b: its own pod selector")
        check_references(fx, f"{s} release pool-b", second)
        check_references(fx, f"{s} default release", first)
    second = render("dra-b", "strategy=dra")
    shared = duplicates(defaults["dra"], second)
    fx.check(shared and all(k[0] in SHARED_KINDS for k in shared),
             f"two DRA releases with the DeviceClasses on share only the DeviceClasses (got {shared})")
    fx.check(not [d for d in render("dra-b", "strategy=dra", "dra.deviceClasses=false")
                  if d["kind"] == "DeviceClass"], "dra.deviceClasses=false renders no DeviceClass")
    # Long release names stay valid object names and label values.
    long_name = "a-release-name-of-fifty-characters-for-the-checks-x"
    docs = render(long_name, "strategy=hami", *ALL_ON)
    too_long = [key_of(d) for d in docs if len(d["metadata"]["name"]) > 63]
    ds, pod, _ = daemonset_of(docs)
    fx.check(not too_long and len(ds["spec"]["selector"]["matchLabels"]["name"]) <= 63,
             f"a {len(long_name)}-character release name gives names of at most 63 characters "
             f"({too_long})")
    check_references(fx, "hami release with a long name", docs)
