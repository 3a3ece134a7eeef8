#!/usr/bin/env python3
"""Checks a docker-archive image tar as `docker load` and `ctr images import`
read it, and prints its uncompressed size in bytes.

    check-image-archive.py <image.tar> <name:tag>

manifest.json must hold one image tagged <name:tag> (or its docker.io/library
form); its config must exist and name one diff_id per layer, each the sha256
of that layer's uncompressed tar. Any mismatch is one line on stderr, exit 1.
"""
import gzip
import hashlib
import json
import sys
import tarfile


def fail(msg):
    print(f"check-image-archive: {sys.argv[1]}: {msg}", file=sys.stderr)
    sys.exit(1)


def layer_digest_and_size(f):
    head = f.read(2)
    f.seek(0)
    stream = gzip.GzipFile(fileobj=f) if head == b"\x1f\x8b" else f
    h, n = hashlib.sha256(), 0
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return "sha256:" + h.hexdigest(), n
        h.update(chunk)
        n += len(chunk)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path, want = sys.argv[1], sys.argv[2]
    try:
        archive = tarfile.open(path)
    except (OSError, tarfile.TarError) as e:
        fail(f"not a tar archive ({e})")
    with archive:
        def read(name):
            try:
                return archive.extractfile(name)
            except KeyError:
                fail(f"{name} is missing")
        manifest = json.load(read("manifest.json"))
        if len(manifest) != 1:
            fail(f"manifest.json holds {len(manifest)} images, want 1")
        entry = manifest[0]
        tags = entry.get("RepoTags") or []
        forms = {want, "docker.io/library/" + want, "localhost/" + want}
        if not forms & set(tags):
            fail(f"tagged {tags}, want {want}")
        config = json.load(read(entry["Config"]))
        diff_ids = config.get("rootfs", {}).get("diff_ids", [])
        layers = entry.get("Layers", [])
        if len(diff_ids) != len(layers) or not layers:
            fail(f"{len(layers)} layers but {len(diff_ids)} diff_ids")
        total = 0
        for name, diff_id in zip(layers, diff_ids):
            digest, size = layer_digest_and_size(read(name))
            if digest != diff_id:
                fail(f"layer {name} has digest {digest}, the config says {diff_id}")
            total += size
    print(total)


if __name__ == "__main__":
    main()
