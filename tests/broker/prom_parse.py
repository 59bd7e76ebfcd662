#!/usr/bin/python3
"""Parse Prometheus text with the reference Python client and print it as JSON.

    prom_parse.py FILE            parse a file
    prom_parse.py http://URL ...  fetch each URL; for /metrics parse the body

Output: {"families": {name: {"type": t, "samples": [[sample_name, {labels}, value]]}},
         "http": [[url, status, content_type]]}
Exit 3 when prometheus_client is missing (the C test skips), 1 on a parse error.
"""
import json
import sys
import urllib.error
import urllib.request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    sys.exit(3)


def parse(text):
    out = {}
    for fam in text_string_to_metric_families(text):
        out[fam.name] = {
            "type": fam.type,
            "samples": [[s.name, dict(s.labels), s.value] for s in fam.samples],
        }
    return out


result = {"families": {}, "http": []}
for arg in sys.argv[1:]:
    if arg.startswith("http://"):
        try:
            with urllib.request.urlopen(arg, timeout=10) as r:
                body = r.read().decode("utf-8")
                result["http"].append([arg, r.status, r.headers.get("Content-Type", "")])
                if arg.endswith("/metrics"):
                    result["families"] = parse(body)
        except urllib.error.HTTPError as e:
            result["http"].append([arg, e.code, e.headers.get("Content-Type", "")])
    else:
        with open(arg, encoding="utf-8") as f:
            result["families"] = parse(f.read())
json.dump(result, sys.stdout)
