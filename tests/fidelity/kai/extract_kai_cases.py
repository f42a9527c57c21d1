"""Re-express KAI-Scheduler's allocate-action test tables as data (not run by pytest).

Usage, with ``KAI`` a checkout of kai-scheduler/KAI-Scheduler at :data:`KAI_COMMIT`::

    python tests/kai/extract_kai_cases.py $KAI > tests/kai/data/allocate_actions.yaml

It reads the case literals of :data:`SOURCES` (Topologies, nodes, jobs with their SubGroup trees
and tasks, expected task / job outcomes) with a small reader of Go composite literals and writes
one YAML record per case; cases toposolve does not model are kept with ``not_ported: <why>`` so
the table stays complete. No Go code is copied.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

KAI_COMMIT = "d5bc503a146317e51037d89775d77172c6d12f71"
SOURCES = [  # (file, function returning the table, test function that runs it)
    (
        "pkg/scheduler/actions/allocate/allocateTopology_test.go",
        "getTopologyTestsMetadata",
        "TestHandleTopologyAllocation",
    ),
    (
        "pkg/scheduler/actions/integration_tests/allocate/allocate_topology_test.go",
        "getTopologyAllocateTestsMetadata",
        "TestAllocateTopologyIntegrationTest",
    ),
    (
        "pkg/scheduler/actions/allocate/allocate_subgroups_test.go",
        "getAllocationSubGroupsTestsMetadata",
        "TestHandleSubGroupsAllocation",
    ),
]
# every case is ported (SubGroup trees of any depth and minSubGroup: KaiTreeEngine); a case
# toposolve cannot reproduce would be listed here with why
NOT_PORTED: dict[str, str] = {}
PLACED = {"Binding", "Running", "Pipelined", "Allocated"}
TOKEN = re.compile(
    r'\s+|//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|`[^`]*`|[A-Za-z_][A-Za-z0-9_.]*'
    r"|-?\d+(?:\.\d+)?|:=|[{}()\[\],:&*=;.+\-/]",
    re.S,
)


class GoLiterals:
    """Values of Go composite literals, calls of the SubGroup builders and closures building a
    tree."""

    def __init__(self, src: str) -> None:
        self.t = [t for t in TOKEN.findall(src) if not (t.isspace() or t.startswith(("//", "/*")))]
        self.i = 0
        self.vars: dict[str, Any] = {}

    def peek(self) -> str:
        return self.t[self.i]

    def take(self, want: str | None = None) -> str:
        tok = self.t[self.i]
        self.i += 1
        if want is not None and tok != want:
            raise SyntaxError(f"expected {want}, got {tok}")
        return tok

    def skip_type(self) -> None:
        while self.peek() in ("[", "*", "map"):
            if self.take() in ("[", "map"):
                if self.peek() == "[":
                    self.take()
                if self.peek() != "]":
                    self.skip_type()
                self.take("]")
        if re.match(r"[A-Za-z_]", self.peek()):
            self.take()

    def value(self) -> Any:
        tok = self.peek()
        if tok == "&":
            self.take()
            return self.value()
        if tok in ("[", "map"):
            self.skip_type()
            return self.composite()
        if tok == "{":
            return self.composite()
        if tok == "func":
            return self.closure()
        self.take()
        if tok.startswith(('"', "`")):
            return json.loads(tok) if tok[0] == '"' else tok[1:-1]
        if re.match(r"-?\d", tok):
            return float(tok) if "." in tok else int(tok)
        if self.peek() == "{":
            return self.composite()
        if self.peek() == "(":
            return self.call(tok, self.arguments())
        return self.vars.get(tok, {"ident": tok})

    def arguments(self) -> list[Any]:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.value())
            if self.peek() == ",":
                self.take()
        self.take(")")
        return args

    def call(self, name: str, args: list[Any]) -> Any:
        short = name.rsplit(".", 1)[-1]
        if short == "NewSubGroupSet":
            return {
                "kind": "set",
                "name": args[0],
                "constraint": args[1],
                "children": [],
                "min_subgroup": None,
            }
        if short == "NewPodSet":
            return {
                "kind": "podset",
                "name": args[0],
                "min": args[1],
                "constraint": args[2] if len(args) > 2 else None,
            }
        if short in ("To", "int64", "int32", "int", "float64"):
            return args[0]
        return {"call": name, "args": args}

    def composite(self) -> Any:
        self.take("{")
        items, keyed = [], {}
        while self.peek() != "}":
            v = self.value()
            if self.peek() == ":":
                self.take()
                keyed[v["ident"] if isinstance(v, dict) else v] = self.value()
            else:
                items.append(v)
            if self.peek() == ",":
                self.take()
        self.take("}")
        return keyed or items

    def closure(self) -> Any:
        """``func() *SubGroupSet { root := New...; root.AddPodSet(...); return root }()``."""
        self.take("func")
        self.take("(")
        self.take(")")
        self.skip_type()
        self.take("{")
        result = None
        while self.peek() != "}":
            tok = self.take()
            if tok == "return":
                result = self.value()
            elif self.peek() == ":=":
                self.take()
                self.vars[tok] = self.value()
            else:
                target, method = tok.rsplit(".", 1)
                args = self.arguments()
                if method == "SetMinSubGroup":
                    self.vars[target]["min_subgroup"] = args[0]
                else:
                    self.vars[target]["children"].append(args[0])
        self.take("}")
        self.take("(")
        self.take(")")
        return result


def ident(v: Any) -> Any:
    return v["ident"].rsplit(".", 1)[-1] if isinstance(v, dict) and "ident" in v else v


def constraint(c: Any) -> dict | None:
    if not isinstance(c, dict) or "ident" in c:
        return None
    out = {
        name: c[key]
        for key, name in (("RequiredLevel", "required"), ("PreferredLevel", "preferred"))
        if c.get(key)
    }
    return out or None


def subgroups(s: dict) -> list[dict]:
    out = []
    for ch in s["children"]:
        o: dict[str, Any] = {"name": ident(ch["name"])}
        if ch["kind"] == "podset":
            o["min"] = ch["min"]
        if c := constraint(ch["constraint"]):
            o["constraint"] = c
        if ch["kind"] == "set":
            o["children"] = subgroups(ch)
            if ch["min_subgroup"] is not None:
                o["min_subgroups"] = ch["min_subgroup"]
        out.append(o)
    return out


def task(t: dict) -> dict:
    out: dict[str, Any] = {}
    if ident(t.get("State")) == "Running":
        out["running_on"] = t["NodeName"]
    for key, name in (
        ("SubGroupName", "subgroup"),
        ("RequiredGPUs", "gpus"),
        ("NodeAffinityNames", "node_affinity"),
    ):
        if key in t:
            out[name] = t[key]
    return out


def job(j: dict) -> dict:
    out: dict[str, Any] = {"name": j["Name"]}
    for key, name in (("RequiredGPUsPerTask", "gpus"), ("RequiredCPUsPerTask", "cpu")):
        if j.get(key):
            out[name] = j[key]
    if root := j.get("RootSubGroupSet"):
        if c := constraint(root["constraint"]):
            out["constraint"] = c
        if root["children"]:
            out["subgroups"] = subgroups(root)
        if root["min_subgroup"] is not None:
            out["min_subgroups"] = root["min_subgroup"]
    out["tasks"] = [task(t) for t in j["Tasks"]]
    return out


def node(n: dict) -> dict:
    out = {name: n[key] for key, name in (("GPUs", "gpus"), ("CPUMillis", "cpu")) if key in n}
    if "Labels" in n:  # the fakes' affinity label key is a Go constant
        out["labels"] = {
            ("affinity" if k.endswith("NodeAffinityKey") else k): v for k, v in n["Labels"].items()
        }
    return out


def outcome(e: dict) -> str:
    status = ident(e.get("Status"))
    return (e.get("NodeName") or "placed") if status in PLACED else status.lower()


def case(c: dict, test: str) -> dict:
    b = c["TestTopologyBasic"]
    out: dict[str, Any] = {"name": b["Name"], "test": test}
    if "Topologies" in b:
        out["topologies"] = {
            t["ObjectMeta"]["Name"]: [lv["NodeLabel"] for lv in t["Spec"]["Levels"]]
            for t in b["Topologies"]
        }
    if (
        "call" in b["Nodes"]
    ):  # buildEvenlyDistributedTopologyNodes(zones, spines, racks, nodes, gpus)
        out["grid"] = dict(
            zip(
                ("zones", "spines_per_zone", "racks_per_spine", "nodes_per_rack", "gpus"),
                b["Nodes"]["args"],
                strict=True,
            )
        )
    else:
        out["nodes"] = {name: node(n) for name, n in b["Nodes"].items()}
    out["jobs"] = [job(j) for j in b["Jobs"]]
    if b.get("TaskExpectedResults"):
        out["expect"] = {name: outcome(e) for name, e in b["TaskExpectedResults"].items()}
    if b.get("JobExpectedResults"):
        out["expect_jobs"] = {
            name: {
                "status": "placed"
                if ident(e["Status"]) == "Running"
                else ident(e["Status"]).lower(),
                **({"node": e["NodeName"]} if e.get("NodeName") else {}),
                **({"message": e["ExpectedErrorMessage"]} if e.get("ExpectedErrorMessage") else {}),
            }
            for name, e in b["JobExpectedResults"].items()
        }
    if b["Name"] in NOT_PORTED:
        out["not_ported"] = NOT_PORTED[b["Name"]]
    return out


def table(path: Path, function: str) -> list[dict]:
    src = path.read_text()
    start = src.index("return", src.index(f"func {function}")) + len("return")
    return GoLiterals(src[start:]).value()


def main(kai: str) -> None:
    cases = []
    for rel, function, test in SOURCES:
        cases += [
            case(c, f"{rel.removeprefix('pkg/scheduler/actions/')} {test}")
            for c in table(Path(kai) / rel, function)
        ]
    head = (f"# KAI-Scheduler allocate-action tables @ {KAI_COMMIT}, written by "
            f"tests/kai/extract_kai_cases.py\n")
    sys.stdout.write(
        head
        + yaml.safe_dump(
            {"commit": KAI_COMMIT, "cases": cases},
            sort_keys=False,
            width=150,
            default_flow_style=None,
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
