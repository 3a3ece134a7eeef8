"""Patch semantics of the fake kube-apiserver: JSON merge patch (RFC 7386), a
strategic merge patch good enough for core/v1 metadata, status and container
lists, and JSON patch (RFC 6902). Each returns a new object; inputs untouched."""

import copy


class PatchError(Exception):
    pass


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Lists merged by a key instead of replaced, as the core/v1 schema declares.
_MERGE_KEYS = {"containers": "name", "initContainers": "name", "conditions": "type",
               "env": "name", "volumes": "name", "volumeMounts": "mountPath",
               "taints": "key", "addresses": "type"}


def strategic_merge_patch(target, patch, field=None):
    if not isinstance(patch, dict):
        if isinstance(patch, list) and isinstance(target, list) and field in _MERGE_KEYS:
            return _merge_list(target, patch, _MERGE_KEYS[field])
        return copy.deepcopy(patch)
    if patch.get("$patch") == "delete":
        return None
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
            continue
        merged = strategic_merge_patch(out.get(k), v, k)
        if merged is None:
            out.pop(k, None)
        else:
            out[k] = merged
    return out


def _merge_list(target, patch, key):
    out = copy.deepcopy(target)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError("list item lacks merge key %r" % key)
        idx = next((i for i, t in enumerate(out) if isinstance(t, dict)
                    and t.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                del out[idx]
        elif idx is None:
            out.append(strategic_merge_patch(None, item))
        else:
            out[idx] = strategic_merge_patch(out[idx], item)
    return out


def _pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError("invalid JSON pointer %r" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc, parts, path):
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise PatchError("path %s does not exist" % path)
    return cur


def _get(doc, path):
    parts = _pointer(path)
    if not parts:
        return doc
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError("path %s does not exist" % path)


def _remove(doc, path):
    parts = _pointer(path)
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError("unable to remove nonexistent key: %s" % path)


def _add(doc, path, value):
    parts = _pointer(path)
    if not parts:
        return copy.deepcopy(value)
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = copy.deepcopy(value)
    elif isinstance(parent, list):
        if last == "-":
            parent.append(copy.deepcopy(value))
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), copy.deepcopy(value))
        else:
            raise PatchError("index out of range in %s" % path)
    else:
        raise PatchError("path %s does not exist" % path)
    return doc


def json_patch(target, ops):
    if not isinstance(ops, list):
        raise PatchError("JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError("malformed JSON patch operation %r" % (op,))
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, op.get("value"))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            _get(doc, path)
            _remove(doc, path) if _pointer(path) else None
            doc = _add(doc, path, op.get("value"))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError("testing value %s failed" % path)
        elif kind == "move":
            doc = _add(doc, path, _remove(doc, op["from"]))
        elif kind == "copy":
            doc = _add(doc, path, _get(doc, op["from"]))
        else:
            raise PatchError("unexpected kind: %s" % kind)
    return doc
