#!/usr/bin/env python3
"""Where the bytes of an image go, from its docker-archive tar
(build-image.sh's offline tar):

    image-size-report.py <image.tar>

Prints each layer's uncompressed size with the Dockerfile step that made it,
then the Debian packages the image adds to its base layer, biggest first
(dpkg's Installed-Size), and our own files (/usr/local).
"""
import json
import sys
import tarfile


def dpkg_status(layer):
    """Package -> Installed-Size (KiB) from a layer's var/lib/dpkg/status, or None."""
    try:
        f = layer.extractfile("var/lib/dpkg/status")
    except KeyError:
        return None
    packages, name = {}, None
    for line in f.read().decode("utf-8", "replace").splitlines():
        if line.startswith("Package: "):
            name = line.split(": ", 1)[1]
        elif line.startswith("Installed-Size: ") and name:
            packages[name] = int(line.split(": ", 1)[1])
    return packages


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    with tarfile.open(sys.argv[1]) as archive:
        manifest = json.load(archive.extractfile("manifest.json"))[0]
        config = json.load(archive.extractfile(manifest["Config"]))
        steps = [h.get("created_by", "") for h in config.get("history", [])
                 if not h.get("empty_layer")]
        layers = manifest["Layers"]
        if len(steps) != len(layers):
            steps = [""] * len(layers)
        total = 0
        statuses, ours = [], []
        print("layer sizes (uncompressed):")
        for name, step in zip(layers, steps):
            member = archive.getmember(name)
            total += member.size
            step = " ".join(step.replace("/bin/sh -c ", "").split())
            print(f"  {member.size / 1e6:8.1f} MB  {step[:100]}")
            with tarfile.open(fileobj=archive.extractfile(member)) as layer:
                statuses.append(dpkg_status(layer))
                for m in layer.getmembers():
                    if m.isfile() and m.name.startswith("usr/local/"):
                        ours.append((m.size, m.name))
        print(f"  {total / 1e6:8.1f} MB  total")
        known = [s for s in statuses if s is not None]
        if len(known) >= 2:
            base, final = known[0], known[-1]
            added = sorted(((final[p], p) for p in final if p not in base), reverse=True)
            print(f"packages added to the base ({len(added)}, "
                  f"{sum(s for s, _ in added) / 1024:.1f} MiB installed):")
            for size, name in added:
                print(f"  {size / 1024:8.1f} MiB  {name}")
            print(f"base: {len(base)} packages, {sum(base.values()) / 1024:.1f} MiB installed")
        print("our files:")
        for size, name in sorted(ours, reverse=True):
            print(f"  {size / 1e6:8.2f} MB  /{name}")


if __name__ == "__main__":
    main()
