#!/usr/bin/env python3
"""merge-sarif.py OUT IN...: merges the SARIF logs of a sharded torch-syncfree run
(--shard=K/N) into one log equal to a single run's: one run, the rules once,
results in (file, line, column, rule) order, a result reported by two shards
(a header seen from both) kept once by its fingerprint, artifacts rebuilt and
re-indexed. Python 3 standard library only."""
import json
import sys


def main():
    out_path, inputs = sys.argv[1], sys.argv[2:]
    if not inputs:
        sys.exit("usage: merge-sarif.py OUT IN...")
    logs = [json.load(open(p)) for p in inputs]
    base = logs[0]
    run = base["runs"][0]
    results, seen = [], set()
    for log in logs:
        for r in log["runs"][0].get("results", []):
            # The same finding from two shards: by its fingerprint (artifact
            # indices differ between shards, so locations are compared by URI).
            loc = r["locations"][0]["physicalLocation"]
            fingerprints = r.get("partialFingerprints")
            key = (r["ruleId"], json.dumps(fingerprints, sort_keys=True)) if fingerprints else \
                (r["ruleId"], loc["artifactLocation"]["uri"], loc["artifactLocation"].get("uriBaseId"),
                 json.dumps(loc["region"], sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            results.append(r)

    def where(r):
        loc = r["locations"][0]["physicalLocation"]
        return (loc["artifactLocation"]["uri"], loc["region"]["startLine"],
                loc["region"]["startColumn"], r["ruleId"])

    results.sort(key=where)
    artifacts, index = [], {}

    def reindex(a):
        key = (a["uri"], a.get("uriBaseId"))
        if key not in index:
            index[key] = len(artifacts)
            entry = {k: v for k, v in a.items() if k != "index"}
            artifacts.append({"location": entry, "roles": ["analysisTarget"],
                              "sourceLanguage": "cuda" if a["uri"].endswith((".cu", ".cuh"))
                              else "cplusplus"})
        a["index"] = index[key]

    for r in results:
        for l in r["locations"] + r.get("relatedLocations", []):
            reindex(l["physicalLocation"]["artifactLocation"])
        for fix in r.get("fixes", []):
            for change in fix["artifactChanges"]:
                reindex(change["artifactLocation"])
    run["results"] = results
    run["artifacts"] = artifacts
    with open(out_path, "w") as f:
        json.dump(base, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
