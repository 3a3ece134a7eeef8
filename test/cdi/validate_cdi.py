#!/usr/bin/env python3
"""Validates a CDI spec file against schema/schema.json + schema/defs.json.

The schema refers to defs.json by a relative URI; resolving that differs
between jsonschema versions, so the definitions are inlined first.
Usage: validate_cdi.py SPEC.json   (exit 0 valid, 1 invalid with the reason)
"""
import json
import os
import sys

import jsonschema

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema")
with open(os.path.join(here, "schema.json")) as f:
    schema = json.load(f)
with open(os.path.join(here, "defs.json")) as f:
    defs = json.load(f)
text = json.dumps(schema).replace('"defs.json#/definitions/', '"#/definitions/')
schema = json.loads(text)
schema["definitions"] = defs["definitions"]
with open(sys.argv[1]) as f:
    spec = json.load(f)
try:
    jsonschema.Draft7Validator(schema).validate(spec)
except jsonschema.ValidationError as e:
    print("invalid:", e.message, "at", list(e.absolute_path))
    sys.exit(1)
print("valid")
