"""The chart's operator view (deploy_check.py alerts; doc/metrics.md):

  - metrics.prometheusRule.enabled renders one PrometheusRule whose groups
    are alerts/hcu-device-plugin.rules.yaml; `promtool check rules` accepts
    them and `promtool test rules` passes alerts_test.yaml against them;
  - metrics.grafanaDashboard.enabled renders one ConfigMap with the Grafana
    sidecar's label whose JSON is dashboards/hcu-device-plugin.json, and
    every query of the dashboard parses as PromQL (promtool, as recording
    rules, with Grafana's variables replaced);
  - both are off by default and with metrics.enabled=false.

That every series the dashboard and the alerts name is one /metrics exposes
is test/ops_metrics/dashboard_test.cc (it scrapes the real daemon).
promtool comes from Debian's `prometheus` package (scripts/install-deps.sh,
HCUDP_EXTRAS=release); without it the test is skipped."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CHART = os.path.join(ROOT, "charts", "hcu-device-plugin")
RULES = os.path.join(CHART, "alerts", "hcu-device-plugin.rules.yaml")
DASHBOARD = os.path.join(CHART, "dashboards", "hcu-device-plugin.json")
RULE_TESTS = os.path.join(HERE, "alerts_test.yaml")
METRICS_DOC = os.path.join(ROOT, "doc", "metrics.md")
ALERTS = {"HCUDeviceUnhealthy", "HCUPluginNotRegistered", "HCUAllocateErrors", "HCUPrepareErrors",
          "HCUAPIClientFailing", "HCUVhcuLeakSuspected"}
# Grafana's variables in the dashboard's queries, as promtool may read them.
GRAFANA_VARS = {"$__rate_interval": "5m", "$instance": ".*"}


def dashboard_queries(dashboard):
    """(panel title, expr) of every query, rows' nested panels included."""
    out = []
    for p in dashboard.get("panels", []):
        for q in [p] + p.get("panels", []):
            for t in q.get("targets", []):
                out.append((q.get("title", "?"), t.get("expr", "")))
    return out


def promtool(fx, args, cwd, what):
    r = subprocess.run(["promtool"] + args, cwd=cwd, capture_output=True, text=True, timeout=120)
    fx.check(r.returncode == 0, f"{what}" + ("" if r.returncode == 0 else f"\n{r.stdout}{r.stderr}"))


def check_rule(fx, render):
    docs = render("strategy=dra", "metrics.prometheusRule.enabled=true",
                  "metrics.prometheusRule.labels.release=kube-prometheus-stack")
    rules = [d for d in docs if d["kind"] == "PrometheusRule"]
    if not fx.check(len(rules) == 1, f"prometheusRule.enabled renders one PrometheusRule (got {len(rules)})"):
        return None
    rule = rules[0]
    fx.check(rule["apiVersion"] == "monitoring.coreos.com/v1" and
             rule["metadata"]["labels"].get("release") == "kube-prometheus-stack",
             "the PrometheusRule is monitoring.coreos.com/v1 and carries prometheusRule.labels")
    with open(RULES) as f:
        source = yaml.safe_load(f)
    fx.check(rule["spec"] == source, "its spec is alerts/hcu-device-plugin.rules.yaml")
    names = {r.get("alert") for g in rule["spec"]["groups"] for r in g["rules"]}
    fx.check(names == ALERTS, f"the alerts are {sorted(ALERTS)} (got {sorted(names)})")
    return rule["spec"]


def doc_anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    anchors = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"#+\s+(.*)", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
                anchors.add(slug)
    return anchors


def check_operator_view(fx, spec, render):
    """Issue 29 item 8: every alert waits (`for:`), links its runbook (a
    section of doc/metrics.md that exists) and names the node; the
    ServiceMonitor adds the node label the alerts name."""
    anchors = doc_anchors(METRICS_DOC)
    for group in spec["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert")
            fx.check("for" in rule, f"{name}: has for:")
            url = rule.get("annotations", {}).get("runbook_url", "")
            m = re.fullmatch(r"doc/metrics\.md#([\w-]+)", url)
            fx.check(m is not None and m.group(1) in anchors,
                     f"{name}: runbook_url {url!r} is a section of doc/metrics.md")
            for key in ("summary", "description"):
                text = rule.get("annotations", {}).get(key, "")
                fx.check("$labels.node" in text, f"{name}: the {key} names the node")
    docs = render("strategy=mixed", "metrics.prometheusRule.enabled=true",
                  "metrics.prometheusRule.runbookBaseURL=https://git.example.com/hcu/blob/v1/")
    urls = [r["annotations"]["runbook_url"] for d in docs if d["kind"] == "PrometheusRule"
            for g in d["spec"]["groups"] for r in g["rules"]]
    fx.check(len(urls) == len(ALERTS) and all(
        u.startswith("https://git.example.com/hcu/blob/v1/doc/metrics.md#") for u in urls),
        f"runbookBaseURL makes every runbook_url absolute ({urls[:1]})")
    docs = render("strategy=mixed", "metrics.serviceMonitor.enabled=true")
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    relabel = {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"}
    fx.check(len(monitors) == 1 and all(relabel in e.get("relabelings", [])
                                        for e in monitors[0]["spec"]["endpoints"]),
             "the ServiceMonitor relabels the pod's node name into `node`")


def check_dashboard(fx, render):
    docs = render("strategy=mixed", "metrics.grafanaDashboard.enabled=true")
    maps = [d for d in docs if d["kind"] == "ConfigMap"]
    if not fx.check(len(maps) == 1, f"grafanaDashboard.enabled renders one ConfigMap (got {len(maps)})"):
        return None
    cm = maps[0]
    fx.check(cm["metadata"]["labels"].get("grafana_dashboard") == "1",
             "the ConfigMap carries the Grafana sidecar's label grafana_dashboard: \"1\"")
    with open(DASHBOARD) as f:
        source = json.load(f)
    data = cm.get("data", {})
    fx.check(list(data) == ["hcu-device-plugin.json"] and json.loads(data["hcu-device-plugin.json"]) == source,
             "its one key hcu-device-plugin.json is dashboards/hcu-device-plugin.json")
    docs = render("strategy=mixed", "metrics.grafanaDashboard.enabled=true",
                  "metrics.grafanaDashboard.namespace=monitoring")
    fx.check([d["metadata"]["namespace"] for d in docs if d["kind"] == "ConfigMap"] == ["monitoring"],
             "grafanaDashboard.namespace places the ConfigMap")
    return source


def cmd_alerts(fx, render):
    for sets in [("strategy=mixed",), ("strategy=dra",),
                 ("strategy=hami", "metrics.enabled=false", "metrics.prometheusRule.enabled=true",
                  "metrics.grafanaDashboard.enabled=true")]:
        kinds = {d["kind"] for d in render(*sets)}
        fx.check(not kinds & {"PrometheusRule", "ConfigMap"},
                 f"{' '.join(sets)}: no PrometheusRule or dashboard ConfigMap")
    spec = check_rule(fx, render)
    if spec is not None:
        check_operator_view(fx, spec, render)
    dashboard = check_dashboard(fx, render)
    if shutil.which("promtool") is None:
        fx.skip("promtool not installed (Debian package prometheus: HCUDP_EXTRAS=release "
                "scripts/install-deps.sh): the rules were not tested")
        return fx.exit()
    with tempfile.TemporaryDirectory() as tmp:
        if spec is not None:
            with open(os.path.join(tmp, "rules.yaml"), "w") as f:
                yaml.safe_dump(spec, f, sort_keys=False)
            shutil.copy(RULE_TESTS, os.path.join(tmp, "alerts_test.yaml"))
            promtool(fx, ["check", "rules", "rules.yaml"], tmp, "promtool check rules: the rendered rules")
            promtool(fx, ["test", "rules", "alerts_test.yaml"], tmp,
                     "promtool test rules alerts_test.yaml: every alert fires, and only, when it should")
        if dashboard is not None:
            queries = dashboard_queries(dashboard)
            fx.check(len(queries) >= 10, f"the dashboard has its queries ({len(queries)})")
            records = []
            for i, (title, expr) in enumerate(queries):
                for var, value in GRAFANA_VARS.items():
                    expr = expr.replace(var, value)
                fx.check("$" not in expr, f"dashboard panel {title!r}: no Grafana variable left in {expr}")
                records.append({"record": f"dashboard:query_{i}", "expr": expr})
            with open(os.path.join(tmp, "dashboard.yaml"), "w") as f:
                yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}, f)
            promtool(fx, ["check", "rules", "dashboard.yaml"], tmp,
                     f"every one of the dashboard's {len(queries)} queries parses as PromQL")
    return fx.exit()
