#!/usr/bin/env python3
"""Reads a JUnit XML file with a real XML parser and prints what a CI viewer
would show, as JSON, for the C++ test to check: the suites and, per test case,
its failure message and text, its system-out and whether it was skipped.
Exits 1 (with the parser's message) if the file is not well-formed XML."""
import json
import sys
import xml.etree.ElementTree as ET

try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    print(f"not well-formed: {e}", file=sys.stderr)
    sys.exit(1)

out = {"root": root.tag, "attrib": dict(root.attrib), "suites": []}
for suite in root.findall("testsuite"):
    s = {"attrib": dict(suite.attrib),
         "properties": {p.get("name"): p.get("value") for p in suite.iter("property")},
         "cases": []}
    for case in suite.findall("testcase"):
        failure = case.find("failure")
        system_out = case.find("system-out")
        s["cases"].append({
            "classname": case.get("classname"),
            "name": case.get("name"),
            "time": case.get("time"),
            "skipped": case.find("skipped") is not None,
            "failure_message": None if failure is None else failure.get("message"),
            "failure_type": None if failure is None else failure.get("type"),
            "failure_text": None if failure is None else failure.text,
            "system_out": None if system_out is None else system_out.text,
        })
    out["suites"].append(s)
json.dump(out, sys.stdout, ensure_ascii=False)
