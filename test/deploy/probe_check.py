"""The DRA DaemonSet's probes (manifest and chart): startup, liveness and
readiness exec `hcuctl dra check`, which dials the DRA service and
registration sockets and needs no metrics (readiness never GETs the metrics
port, which faces the network: issue 25). With a
built hcuctl (HCUDP_BUILD_DIR), the probe's own command line is run: it must
parse (not exit 2) and fail (exit 1) where no driver serves.
test/deploy/dra_probe_test.cc runs the same command against the real daemon."""
import os
import subprocess
import tempfile

SKIP_CALLS = 2  # service + registration, one after the other


def timeout_ms_of(command):
    for arg in command:
        if arg.startswith("--timeout-ms="):
            return int(arg.split("=", 1)[1])
    return 5000  # hcuctl's default


def run_probe_command(fx, label, command):
    """Runs the probe's command line with the built hcuctl against empty
    kubelet directories: it must be a valid command that fails there."""
    build = os.environ.get("HCUDP_BUILD_DIR")
    hcuctl = os.path.join(build or "", "hcuctl", "hcuctl")
    if not build or not os.access(hcuctl, os.X_OK):
        fx.skip(f"{label}: hcuctl not built (HCUDP_BUILD_DIR): the probe command was not run")
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, KUBELET_PLUGINS_DIR=os.path.join(tmp, "plugins"),
                   KUBELET_REGISTRY_DIR=os.path.join(tmp, "registry"))
        r = subprocess.run([hcuctl] + command[1:], capture_output=True, text=True, env=env, timeout=60)
    fx.check(r.returncode == 1 and "service" in r.stdout and "fail" in r.stdout,
             f"{label}: `{' '.join(command)}` parses and fails where no driver serves "
             f"(exit {r.returncode}: {r.stdout}{r.stderr})")


def check_dra_probes(fx, label, container, metrics=True, run=False):
    for kind, min_budget_s in (("startupProbe", 120), ("livenessProbe", 30), ("readinessProbe", 0)):
        probe = container.get(kind) or {}
        command = (probe.get("exec") or {}).get("command") or []
        fx.check(command[:3] == ["hcuctl", "dra", "check"],
                 f"{label}: {kind} execs `hcuctl dra check` (got {command})")
        if command[:3] != ["hcuctl", "dra", "check"]:
            continue
        timeout_s = probe.get("timeoutSeconds", 1)
        fx.check(timeout_s * 1000 >= SKIP_CALLS * timeout_ms_of(command) + 1000,
                 f"{label}: {kind} timeoutSeconds {timeout_s} covers its {SKIP_CALLS} calls of "
                 f"{timeout_ms_of(command)} ms")
        budget = probe.get("periodSeconds", 10) * probe.get("failureThreshold", 3)
        fx.check(budget >= min_budget_s,
                 f"{label}: {kind} tolerates {budget} s of failures (at least {min_budget_s} s)")
        if run and kind == "livenessProbe":
            run_probe_command(fx, label, command)
    ready = container.get("readinessProbe") or {}
    fx.check("httpGet" not in ready,
             f"{label}: readiness does not GET the metrics port (metrics {'on' if metrics else 'off'})")
