#!/usr/bin/env python3
"""tests/analysis/classes.test: `snapview top --by category --categories`
with a good rules file applied its rules (the optimizer's lines moved
to other, first match wins).

usage: classes_rules.py TOP.json
"""
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
c = {x["category"]: x["bytes"] for x in d["categories"]}
assert d["by_rule_count"] > 0, d["by_rule_count"]
assert "optimizer_state" not in c, c
assert c["other"] > 3 << 30, c
