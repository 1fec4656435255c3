"""check_sarif.py SCHEMA LOG: validates a SARIF log against the SARIF 2.1.0
schema, then checks what GitHub code scanning requires beyond the schema
(the GH rules of Sarif.Multitool, and consistency the schema cannot see).
Prints 'SARIF OK: N results, M rules' or each problem; exit 1 on problems."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
log = json.load(open(sys.argv[2]))
problems = []
validator = jsonschema.Draft202012Validator(schema)
for error in validator.iter_errors(log):
    problems.append("schema: %s at %s" % (error.message, "/".join(map(str, error.path))))

for r, run in enumerate(log.get("runs", [])):
    rules = run["tool"]["driver"].get("rules", [])
    for i, rule in enumerate(rules):
        where = "runs[%d].rules[%d] (%s)" % (r, i, rule.get("id"))
        for field in ("shortDescription", "fullDescription", "help", "helpUri",
                      "defaultConfiguration"):
            if field not in rule:
                problems.append("%s: no %s (GH2012)" % (where, field))
        if "help" in rule and not rule["help"].get("markdown"):
            problems.append("%s: help has no markdown" % where)
        if rule.get("name") == rule.get("id"):
            problems.append("%s: name equals id (SARIF1001)" % where)
        if not rule.get("properties", {}).get("tags"):
            problems.append("%s: no properties.tags" % where)
    bases = run.get("originalUriBaseIds", {})
    artifacts = run.get("artifacts", [])
    for k, result in enumerate(run.get("results", [])):
        where = "runs[%d].results[%d]" % (r, k)
        index = result.get("ruleIndex")
        if index is None or rules[index]["id"] != result.get("ruleId"):
            problems.append("%s: ruleIndex does not point at rule %s" % (where, result.get("ruleId")))
        if not result.get("partialFingerprints"):
            problems.append("%s: no partialFingerprints" % where)
        if "dependency" not in result.get("properties", {}):
            problems.append("%s: no dependency class in properties" % where)
        locations = [l["physicalLocation"] for l in result.get("locations", [])]
        locations += [l["physicalLocation"] for l in result.get("relatedLocations", [])]
        for fix in result.get("fixes", []):
            files = [c["artifactLocation"]["uri"] for c in fix["artifactChanges"]]
            if len(files) != len(set(files)):
                problems.append("%s: a fix has two artifactChanges for one file" % where)
            locations += [{"artifactLocation": c["artifactLocation"]} for c in fix["artifactChanges"]]
        for loc in locations:
            a = loc["artifactLocation"]
            if a["uri"].startswith("file://"):
                problems.append("%s: absolute URI %s (GitHub wants paths relative to a uriBaseId)"
                                % (where, a["uri"]))
            elif a.get("uriBaseId") not in bases:
                problems.append("%s: uriBaseId %s not in originalUriBaseIds" % (where, a.get("uriBaseId")))
            if "index" in a:
                target = artifacts[a["index"]]["location"]
                if (target["uri"], target.get("uriBaseId")) != (a["uri"], a.get("uriBaseId")):
                    problems.append("%s: artifact index %d is %s, not %s" % (where, a["index"],
                                                                            target["uri"], a["uri"]))
            region = loc.get("region")
            if region is not None and region.get("startLine", 0) < 1:
                problems.append("%s: region without a startLine" % where)
    for name, base in bases.items():
        if not base["uri"].startswith("file:///") or not base["uri"].endswith("/"):
            problems.append("originalUriBaseIds.%s: %s is not an absolute directory URI" % (name, base["uri"]))

for p in problems:
    print(p)
if problems:
    sys.exit(1)
print("SARIF OK: %d results, %d rules" % (
    sum(len(run.get("results", [])) for run in log["runs"]),
    sum(len(run["tool"]["driver"].get("rules", [])) for run in log["runs"])))
