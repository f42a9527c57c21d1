"""Re-express Kueue's ``TestFindTopologyAssignments`` table as data (not run by pytest).

Usage: ``python tests/kueue/extract_kueue_cases.py tas_cache_test.go > data/tas_find_topology_assignments.yaml``
where the Go file is ``pkg/cache/scheduler/tas_cache_test.go`` of kubernetes-sigs/kueue at the
commit named in :data:`KUEUE_COMMIT`. It reads the case literals (nodes, levels, podsets, wanted
assignment or reason, feature gates) and writes one YAML record per case; a case using fields it
does not model (non-TAS pods, prior usage, workloads in replacement, affinity, elastic slices…)
is kept with ``skip: <why>`` so the table stays complete. No Go code is copied.
"""

from __future__ import annotations

import re
import sys

import yaml

KUEUE_COMMIT = "ff69552e79ad21652c36caa97038382e55625cf7"
LABELS = {
    "tasDataCenterLabel": "cloud.com/datacenter",
    "tasAIZoneLabel": "cloud.com/aizone",
    "tasBlockLabel": "cloud.com/topology-block",
    "tasRackLabel": "cloud.com/topology-rack",
    "tasSubBlockLabel": "cloud.com/topology-subblock",
    "corev1.LabelHostname": "kubernetes.io/hostname",
}
RESOURCES = {"corev1.ResourceCPU": "cpu", "corev1.ResourceMemory": "memory", "corev1.ResourcePods": "pods"}
UNSUPPORTED_FIELDS = {
    "pods:": "non-TAS pods' usage is not modelled in the table harness",
    "priorFlavorUsage": "prior flavor usage",
    "priorOwnUsage": "prior own usage",
    "workload:": "node replacement of an admitted workload",
    "aggregatedDomainUsages": "cross-flavor aggregated usage",
    "previousAssignment": "elastic workload slices",
    "nodeAffinity": "preferred/required node affinity in the podset",
    "PodsetSliceRequiredTopologyConstraints": "multi-layer slices (depth > 2)",
    "nodeLabels:": "flavor node labels",
    "tolerations:": "tolerations",
    "Taints(": "taints",
}


def blocks(text: str, start: int) -> tuple[str, int]:
    """The brace-balanced block starting at the ``{`` at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1], i + 1
    raise ValueError("unbalanced")


def label(token: str) -> str:
    token = token.strip()
    if token.startswith("string(") and token.endswith(")"):
        token = token[len("string(") : -1]
    if token.startswith('"'):
        return token.strip('"')
    return LABELS[token]


def quantity_map(body: str) -> dict[str, str]:
    out = {}
    for key, value in re.findall(r'([\w.]+|"[^"]+"):\s*resource\.MustParse\("([^"]+)"\)', body):
        out[RESOURCES.get(key, key.strip('"'))] = value
    return out


def parse_nodes(body: str) -> list[dict]:
    nodes = []
    body = re.sub(r"\.\s+", ".", body)  # builder chains break lines after the dot
    for m in re.finditer(r'MakeNode\("([^"]+)"\)', body):
        end = body.find(".Obj()", m.end())
        chain = body[m.end() : end]
        node = {"name": m.group(1), "labels": {}, "allocatable": {}}
        for k, v in re.findall(r'\.Label\(([\w.]+|"[^"]+"),\s*"([^"]*)"\)', chain):
            node["labels"][label(k)] = v
        alloc = re.search(r"StatusAllocatable\(corev1\.ResourceList\{(.*?)\}\)", chain, re.S)
        if alloc:
            node["allocatable"] = quantity_map(alloc.group(1))
        if ".NotReady()" in chain or ".Unschedulable()" in chain:
            node["unschedulable"] = True
        nodes.append(node)
    return nodes


def parse_levels(expr: str, named: dict[str, list[str]]) -> list[str]:
    expr = expr.strip().rstrip(",")
    if expr in named:
        return named[expr]
    inner = re.search(r"\[\]string\{(.*)\}", expr, re.S)
    return [label(t) for t in inner.group(1).split(",") if t.strip()]


def field_expr(body: str, name: str) -> str | None:
    m = re.search(rf"\n\t*{name}:\s*", body)
    if not m:
        return None
    rest = body[m.end() :]
    if rest.startswith("[]") or rest.startswith("&") or rest.startswith("map"):
        brace = rest.index("{")
        block, _ = blocks(rest, brace)
        return rest[:brace] + block
    return rest.split("\n", 1)[0].rstrip(",")


def parse_request(expr: str) -> dict:
    req: dict = {}
    for go, key in (("Required", "required"), ("Preferred", "preferred"), ("PodSetSliceRequiredTopology", "podSetSliceRequiredTopology"),
                    ("PodSetGroupName", "podSetGroupName")):
        m = re.search(rf"\b{go}:\s*(?:new|ptr\.To)\(((?:string\()?[^)]+\)?)\)", expr)
        if m:
            req[key] = label(m.group(1))
    m = re.search(r"PodSetSliceSize:\s*(?:new\(int32\((\d+)\)\)|ptr\.To\[int32\]\((\d+)\)|ptr\.To\(int32\((\d+)\)\))", expr)
    if m:
        req["podSetSliceSize"] = int(next(g for g in m.groups() if g))
    if re.search(r"Unconstrained:\s*(ptr\.To\(true\)|new\(true\))", expr):
        req["unconstrained"] = True
    return req


def parse_requests(expr: str) -> dict[str, str]:
    out = {}
    for key, value in re.findall(r'([\w.]+|"[^"]+"):\s*(\d+)', expr):
        name = RESOURCES.get(key, key.strip('"'))
        out[name] = f"{value}m" if name == "cpu" else value
    return out


def parse_assignment(expr: str, named: dict[str, list[str]]) -> dict:
    levels = parse_levels(field_expr(expr, "Levels"), named)
    domains = []
    for m in re.finditer(r"Count:\s*(\d+),\s*Values:\s*\[\]string\{([^}]*)\}", expr, re.S):
        values = [v.strip().strip('"') for v in m.group(2).split(",") if v.strip()]
        domains.append({"values": values, "count": int(m.group(1))})
    return {"levels": levels, "domains": domains}


def parse_podsets(expr: str, named: dict[str, list[str]]) -> list[dict]:
    podsets = []
    inner = expr[expr.index("{") + 1 :]
    pos = 0
    while True:
        start = inner.find("{", pos)
        if start < 0:
            break
        block, pos = blocks(inner, start)
        ps: dict = {}
        name = re.search(r'podSetName:\s*"([^"]+)"', block)
        ps["name"] = name.group(1) if name else "main"
        tr = field_expr(block, "topologyRequest")
        if tr:
            ps["topologyRequest"] = parse_request(tr)
        ps["requests"] = parse_requests(field_expr(block, "requests") or "")
        ps["count"] = int(re.search(r"\n\t*count:\s*(\d+)", block).group(1))
        selector = field_expr(block, "nodeSelector")
        if selector:
            ps["nodeSelector"] = {label(k): v for k, v in re.findall(r'([\w.]+|"[^"]+"):\s*"([^"]*)"', selector)}
        want = field_expr(block, "wantAssignment")
        if want and want.strip() != "nil":
            ps["want"] = parse_assignment(want, named)
        reason = re.search(r'wantReason:\s*(`[^`]*`|"(?:[^"\\]|\\.)*")', block)
        if reason:
            ps["wantReason"] = reason.group(1)[1:-1].replace('\\"', '"')
        podsets.append(ps)
        if inner[pos:].lstrip().startswith("}"):
            break
    return podsets


def main(path: str) -> None:
    text = open(path, encoding="utf-8").read()
    head = text[text.index("func TestFindTopologyAssignments") :]
    table_at = head.index("cases := map[string]struct")
    prelude, table = head[:table_at], head[table_at:]
    named_nodes = {}
    for m in re.finditer(r"\n\t(\w+) := \[\]corev1\.Node\{", prelude):
        block, _ = blocks(prelude, m.end() - 1)
        named_nodes[m.group(1)] = parse_nodes(block)
    named_levels = {}
    for m in re.finditer(r"\n\t(\w+) := \[\]string\{([^}]*)\}", prelude):
        named_levels[m.group(1)] = [label(t) for t in m.group(2).split(",") if t.strip()]
    body_start = table.index("}{", table.index("cases := map")) + 1
    cases_text, _ = blocks(table, body_start)
    out = []
    for m in re.finditer(r'\n\t\t"((?:[^"\\]|\\.)+)":\s*\{', cases_text):
        block, _ = blocks(cases_text, m.end() - 1)
        case: dict = {"name": m.group(1)}
        gates = dict(re.findall(r"features\.(\w+):\s*(true|false)", block))
        if gates:
            case["featureGates"] = {k: v == "true" for k, v in gates.items()}
        why = next((w for f, w in UNSUPPORTED_FIELDS.items() if f in block), None)
        try:
            nodes_expr = field_expr(block, "nodes")
            case["nodes"] = named_nodes[nodes_expr] if nodes_expr in named_nodes else parse_nodes(nodes_expr or "")
            case["levels"] = parse_levels(field_expr(block, "levels"), named_levels)
            case["podSets"] = parse_podsets(field_expr(block, "podSets"), named_levels)
        except (AttributeError, KeyError, ValueError, TypeError) as exc:
            why = why or f"not transcribed automatically ({type(exc).__name__}: {exc})"
        if why:
            case = {"name": case["name"], "skip": why}
        out.append(case)
    header = (
        f"# Kueue TestFindTopologyAssignments (pkg/cache/scheduler/tas_cache_test.go @ {KUEUE_COMMIT})\n"
        "# re-expressed as data by tests/kueue/extract_kueue_cases.py; cpu requests in milli-cores\n"
    )
    dumper = type("NoAliases", (yaml.SafeDumper,), {"ignore_aliases": lambda self, data: True})
    sys.stdout.write(header + yaml.dump({"commit": KUEUE_COMMIT, "cases": out}, Dumper=dumper, sort_keys=False, width=120))


if __name__ == "__main__":
    main(sys.argv[1])
