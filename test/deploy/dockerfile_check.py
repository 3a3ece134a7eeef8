"""The Dockerfile check of test/deploy (deploy_check.py dockerfile): a cheap
lint without building: COPY sources exist, apt packages exist, the runtime
stage carries every shared library the built binaries need, image facts."""
import glob
import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


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


def cmd_dockerfile(args, fx):
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
