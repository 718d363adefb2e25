#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""check-summaries.py PATH...: validate every summary.json under each PATH (a file or a
directory, searched) against tests/schemas/summary.schema.json. Prints "N summaries valid" or
each invalid one with its first errors, and exits 1 when one is invalid, 2 when none was found
or a file is no JSON."""
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))


def summaries(paths):
    for p in paths:
        if os.path.isfile(p):
            yield p
            continue
        for root, _, files in os.walk(p):
            if "summary.json" in files:
                yield os.path.join(root, "summary.json")


def main():
    with open(os.path.join(HERE, "summary.schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    n = bad = 0
    for path in summaries(sys.argv[1:]):
        n += 1
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print("%s: not read: %s" % (path, e))
            return 2
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        if errors:
            bad += 1
            print("%s: %d errors" % (path, len(errors)))
            for e in errors[:5]:
                print("  at /%s: %s" % ("/".join(str(x) for x in e.absolute_path),
                                         e.message[:300]))
    if not n:
        print("no summary.json found")
        return 2
    print("%d summaries, %d invalid" % (n, bad))
    return 1 if bad else 0


sys.exit(main())
