"""Where the DaemonSets go (deploy_check.py placement; doc/labels.md, "What a
new node needs"). Issue 29 item 7: the DaemonSets were placed only by
hygon.com/hcu=true, which Hygon's label tool puts on a new node; without
that tool a node added later never got the plugin. Each strategy's default
placement (chart and static manifest) must accept a node that has only Node
Feature Discovery's PCI label for Hygon's HCUs (vendor 1d94, class 0380 or
0b40), keep the strategies' node modes apart, and refuse a node without
HCUs (one with a Hygon CPU's PCI functions only).

The pod's nodeSelector and required node affinity are evaluated here as the
scheduler does: every nodeSelector pair, and any one nodeSelectorTerm whose
matchExpressions all hold (In, NotIn, Exists, DoesNotExist)."""

NFD_DISPLAY = "feature.node.kubernetes.io/pci-0380_1d94.present"
NFD_COPROCESSOR = "feature.node.kubernetes.io/pci-0b40_1d94.present"
HYGON = "hygon.com/hcu"


def expression_holds(expr, labels):
    key, op, values = expr["key"], expr["operator"], expr.get("values", [])
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    raise ValueError(f"operator {op} not evaluated here")


def schedules_on(pod_spec, labels):
    """Whether the pod's nodeSelector and required node affinity accept a node with `labels`."""
    for k, v in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(k) != v:
            return False
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if not required:
        return True
    return any(all(expression_holds(e, labels) for e in term.get("matchExpressions", []))
               for term in required["nodeSelectorTerms"])


# (node labels, strategies whose DaemonSet must run there). hami keeps HAMi's
# own convention (hcu=on, set by whoever enables HAMi on the node).
NODES = [
    ({HYGON: "true"}, {"mixed"}),
    ({NFD_DISPLAY: "true"}, {"mixed"}),
    ({NFD_COPROCESSOR: "true"}, {"mixed"}),
    ({NFD_DISPLAY: "true", "hcu-mode": "mig"}, {"mig"}),
    ({HYGON: "true", "hcu-mode": "mig"}, {"mig"}),
    ({NFD_DISPLAY: "true", "hcu-mode": "dra"}, {"dra"}),
    ({NFD_COPROCESSOR: "true", "hcu-mode": "dra"}, {"dra"}),
    ({NFD_DISPLAY: "true", "hcu": "on"}, {"hami"}),
    # No HCU: a Hygon CPU's own functions (host bridge, SATA: other classes).
    ({"feature.node.kubernetes.io/pci-0600_1d94.present": "true"}, set()),
    ({}, set()),
    ({"hcu-mode": "dra"}, set()),
]


def check_placement(fx, strategy, pod_spec, where):
    for labels, wanted in NODES:
        want = strategy in wanted
        got = schedules_on(pod_spec, labels)
        fx.check(got == want, f"{where}: {'runs' if want else 'does not run'} on a node labelled "
                              f"{labels or '(nothing)'}" + ("" if got == want else f" (it {'does' if got else 'does not'})"))


def cmd_placement(fx, render, load_manifest):
    for strategy in ("mixed", "mig", "hami", "dra"):
        docs = render(f"strategy={strategy}")
        ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
        check_placement(fx, strategy, ds["spec"]["template"]["spec"], f"chart strategy={strategy}")
        ds = [d for d in load_manifest(strategy) if d["kind"] == "DaemonSet"][0]
        check_placement(fx, strategy, ds["spec"]["template"]["spec"], f"manifest {strategy}")
    return fx.exit()
