"""Re-express Kueue's ``TestFindTopologyAssignments`` table as data (not run by pytest).

Usage: ``python tests/kueue/extract_kueue_cases.py tas_cache_test.go >
data/tas_find_topology_assignments.yaml``
where the Go file is ``pkg/cache/scheduler/tas_cache_test.go`` of kubernetes-sigs/kueue at the
commit named in :data:`KUEUE_COMMIT`. It reads the case literals (nodes, levels, podsets, wanted
assignment or reason, feature gates) and writes one YAML record per case; a case using fields it
does not model (listed in ``UNSUPPORTED_FIELDS``; none at the pinned commit) is kept with
``skip: <why>`` so the table stays complete; an elastic slice's ``previousAssignment`` is read.
No Go code is copied.
"""

from __future__ import annotations

import math
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
RESOURCES = {
    "corev1.ResourceCPU": "cpu",
    "corev1.ResourceMemory": "memory",
    "corev1.ResourcePods": "pods",
}
UNSUPPORTED_FIELDS: dict[str, str] = {}  # Go field -> why a case using it is skipped
TAINT_EFFECTS = {
    "corev1.TaintEffectNoSchedule": "NoSchedule",
    "corev1.TaintEffectNoExecute": "NoExecute",
    "corev1.TaintEffectPreferNoSchedule": "PreferNoSchedule",
}
OPERATORS = {
    "corev1.NodeSelectorOpIn": "In",
    "corev1.NodeSelectorOpNotIn": "NotIn",
    "corev1.NodeSelectorOpExists": "Exists",
    "corev1.NodeSelectorOpDoesNotExist": "DoesNotExist",
    "corev1.TolerationOpEqual": "Equal",
    "corev1.TolerationOpExists": "Exists",
}
POD_PHASES = {
    "corev1.PodPending": "Pending",
    "corev1.PodRunning": "Running",
    "corev1.PodSucceeded": "Succeeded",
    "corev1.PodFailed": "Failed",
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
        if ".Unschedulable()" in chain:
            node["unschedulable"] = True
        if ".NotReady()" in chain:
            node["ready"] = False
        taints = [
            {"key": k, "value": v, "effect": TAINT_EFFECTS[e]}
            for k, v, e in re.findall(
                r'Key:\s*"([^"]*)",\s*Value:\s*"([^"]*)",\s*Effect:\s*([\w.]+)', chain
            )
        ]
        if taints:
            node["taints"] = taints
        nodes.append(node)
    return nodes


def parse_rack_nodes(body: str) -> list[dict]:
    """Nodes a case builds in a loop (``func() []corev1.Node``: a table of racks, ``for i := range
    n`` nodes each, named with ``fmt.Sprintf``), expanded one by one."""
    fields = re.search(r"type rackDef struct \{\s*([\w, ]+?)\s+string", body).group(1)
    keys = [f.strip() for f in fields.split(",")]
    racks = [dict(zip(keys, re.findall(r'"([^"]*)"', row), strict=True))
             for row in re.findall(r"\{(\"[^}]*)\}", body[body.index("racks := "):])]
    per_rack = int(re.search(r"for i := range (\d+)", body).group(1))
    fmt, args = re.search(r'fmt\.Sprintf\("([^"]+)",\s*([^)]*)\)', body).groups()
    template = parse_nodes(re.sub(r'MakeNode\(name\)', 'MakeNode("n")', body))[0]
    labels = re.findall(r"\.Label\(([\w.]+),\s*r\.(\w+)\)", re.sub(r"\.\s+", ".", body))
    nodes = []
    for rack in racks:
        for i in range(per_rack):
            values = [str(i) if a.strip() == "i" else rack[a.strip()[2:]] for a in args.split(",")]
            node = {**template, "name": fmt.replace("%d", "%s") % tuple(values)}
            node["labels"] = {label(k): rack[field] for k, field in labels}
            nodes.append(node)
    return nodes


def parse_levels(expr: str, named: dict[str, list[str]]) -> list[str]:
    expr = expr.strip().rstrip(",")
    if expr in named:
        return named[expr]
    appended = re.fullmatch(r"append\((.*),\s*(\w+)\.\.\.\)", expr, re.S)
    if appended:  # append([]string{...}, named...)
        return parse_levels(appended.group(1), named) + named[appended.group(2)]
    inner = re.search(r"\[\]string\{(.*)\}", expr, re.S)
    return [label(t) for t in inner.group(1).split(",") if t.strip()]


def go_expression(text: str) -> str:
    """The Go expression at the start of ``text``: up to the first ``,`` or closing bracket at depth
    0."""
    depth, i, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        if ch in '"`':
            close = (
                text.index(ch, i + 1)
                if ch == "`"
                else re.compile(r'(?<!\\)"').search(text, i + 1).start()
            )
            i = close + 1
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        i += 1
    return text[:i].strip()


def field_expr(body: str, name: str) -> str | None:
    m = re.search(rf"\n\t*{name}:\s*", body)
    if not m:
        return None
    return go_expression(body[m.end() :])


def parse_request(expr: str) -> dict:
    req: dict = {}
    for go, key in (
        ("Required", "required"),
        ("Preferred", "preferred"),
        ("PodSetSliceRequiredTopology", "podSetSliceRequiredTopology"),
        ("PodSetGroupName", "podSetGroupName"),
    ):
        m = re.search(rf"\b{go}:\s*(?:new|ptr\.To)\(((?:string\()?[^)]+\)?)\)", expr)
        if m:
            req[key] = label(m.group(1))
    m = re.search(
        r"PodSetSliceSize:\s*(?:new\(int32\((\d+)\)\)|ptr\.To\[int32\]\((\d+)\)|ptr\.To\(int32\((\d+)\)\))",
        expr,
    )
    if m:
        req["podSetSliceSize"] = int(next(g for g in m.groups() if g))
    if re.search(r"Unconstrained:\s*(ptr\.To\(true\)|new\(true\))", expr):
        req["unconstrained"] = True
    layers = re.search(r"PodsetSliceRequiredTopologyConstraints:\s*\[\][\w.]+\{(.*?)\n\t*\},",
                       expr, re.S)
    if layers:  # multi-layer slices, outermost first
        req["podsetSliceRequiredTopologyConstraints"] = [
            {"topology": label(level), "size": int(size)}
            for level, size in re.findall(r"\{Topology:\s*([\w.]+),\s*Size:\s*(\d+)\}",
                                          layers.group(1))
        ]
    return req


def parse_requests(expr: str) -> dict[str, str]:
    out = {}
    for key, product in re.findall(r'([\w.]+|"[^"]+"):\s*(\d+(?:\s*\*\s*\d+)*)', expr):
        name = RESOURCES.get(key, key.strip('"'))
        value = str(math.prod(int(f) for f in product.split("*")))  # e.g. 1024 * 1024 * 1024
        out[name] = f"{value}m" if name == "cpu" else value
    return out


def parse_assignment(expr: str, named: dict[str, list[str]]) -> dict:
    builder = re.match(r"&?\w+\.MakeTopologyAssignment\(", expr)
    levels_expr = go_expression(expr[builder.end() :]) if builder else field_expr(expr, "Levels")
    levels = parse_levels(levels_expr, named)
    domains = []
    for m in re.finditer(r"Count:\s*(\d+),\s*Values:\s*\[\]string\{([^}]*)\}", expr, re.S):
        values = [v.strip().strip('"') for v in m.group(2).split(",") if v.strip()]
        domains.append({"values": values, "count": int(m.group(1))})
    return {"levels": levels, "domains": domains}


def _string_list(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def parse_tolerations(expr: str) -> list[dict]:
    out = []
    for body in re.findall(r"\{([^{}]*)\}", expr):
        fields = dict(re.findall(r"(\w+):\s*([\w.]+|\"[^\"]*\")", body))
        tol = {k.lower(): v.strip('"') for k, v in fields.items() if k in ("Key", "Value")}
        if "Operator" in fields:
            tol["operator"] = OPERATORS[fields["Operator"]]
        if "Effect" in fields:
            tol["effect"] = TAINT_EFFECTS[fields["Effect"]]
        out.append(tol)
    return out


def parse_node_affinity(expr: str) -> dict:
    """``MakeNodeSelectorTerms().Term(key, op, values...)`` (one term each) and
    ``MakePreferredSchedulingTerms().Term(weight, key, op, values...)`` → the Kubernetes fields."""
    out: dict = {}
    expr = re.sub(r"\.\s+", ".", expr)  # builder chains break lines after the dot
    term = r"\.Term\((\d+,\s*)?(\"[^\"]*\"|[\w.]+),\s*([\w.]+)((?:,\s*\"[^\"]*\")*)\)"
    required = re.search(r"MakeNodeSelectorTerms\(\)((?:\.Term\([^)]*\))+)", expr)
    if required:
        terms = [
            {
                "matchExpressions": [
                    {"key": label(k), "operator": OPERATORS[op], "values": _string_list(v)}
                ]
            }
            for _, k, op, v in re.findall(term, required.group(1))
        ]
        out["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    preferred = re.search(r"MakePreferredSchedulingTerms\(\)((?:\.Term\([^)]*\))+)", expr)
    if preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {
                "weight": int(w.rstrip(", ")),
                "preference": {
                    "matchExpressions": [
                        {"key": label(k), "operator": OPERATORS[op], "values": _string_list(v)}
                    ]
                },
            }
            for w, k, op, v in re.findall(term, preferred.group(1))
        ]
    return out


def parse_pods(expr: str) -> list[dict]:
    """Non-TAS pods: ``MakePod(name, ns)`` chains with NodeName, StatusPhase and Request."""
    pods = []
    expr = re.sub(r"\.\s+", ".", expr)
    for m in re.finditer(r'MakePod\("([^"]+)",\s*"([^"]+)"\)', expr):
        chain = expr[m.end() : expr.find(".Obj()", m.end())]
        pod: dict = {"name": m.group(1), "namespace": m.group(2)}
        node = re.search(r'\.NodeName\("([^"]+)"\)', chain)
        if node:
            pod["nodeName"] = node.group(1)
        phase = re.search(r"\.StatusPhase\(([\w.]+)\)", chain)
        if phase:
            pod["phase"] = POD_PHASES[phase.group(1)]
        pod["requests"] = {
            RESOURCES.get(k, k.strip('"')): v
            for k, v in re.findall(r'\.Request\(([\w.]+|"[^"]+"),\s*"([^"]+)"\)', chain)
        }
        pods.append(pod)
    return pods


def parse_usage(expr: str) -> list[dict]:
    """``[]workload.TopologyDomainRequests{{Values, SinglePodRequests, Count}, ...}`` (prior
    usage)."""
    out = []
    inner, pos = expr[expr.index("{") + 1 :], 0
    while (start := inner.find("{", pos)) >= 0:
        entry, pos = blocks(inner, start)
        values = re.search(r"Values:\s*\[\]string\{([^}]*)\}", entry)
        requests = re.search(r"int64\{([^}]*)\}", entry)
        count = re.search(r"Count:\s*(\d+)", entry)
        out.append(
            {
                "values": _string_list(values.group(1)),
                "requests": parse_requests(requests.group(1)),
                "count": int(count.group(1)),
            }
        )
    return out


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
        group = re.search(r'\n\t*podSetGroupName:\s*new\("([^"]+)"\)', block)
        if (
            group
        ):  # a field of the test's podset; Kueue's Workload carries it in the topology request
            ps.setdefault("topologyRequest", {})["podSetGroupName"] = group.group(1)
        ps["requests"] = parse_requests(field_expr(block, "requests") or "")
        ps["count"] = int(re.search(r"\n\t*count:\s*(\d+)", block).group(1))
        selector = field_expr(block, "nodeSelector")
        if selector:
            ps["nodeSelector"] = {
                label(k): v for k, v in re.findall(r'([\w.]+|"[^"]+"):\s*"([^"]*)"', selector)
            }
        tolerations = field_expr(block, "tolerations")
        if tolerations:
            ps["tolerations"] = parse_tolerations(tolerations)
        affinity = field_expr(block, "nodeAffinity")
        if affinity:
            ps["nodeAffinity"] = parse_node_affinity(affinity)
        previous = field_expr(block, "previousAssignment")
        if previous:  # elastic slices: the assignment of the slice this workload replaces
            ps["previousAssignment"] = parse_assignment(previous, named)
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


def parse_admitted(expr: str, named: dict[str, list[str]]) -> dict:
    """``MakeWorkload(...).OwnerReference(...).Annotations(...).Admission(...).UnhealthyNodes(...)``:
    the admitted workload a node replacement case starts from."""
    expr = re.sub(r"\.\s+", ".", expr)
    owners = []
    for m in re.finditer(
        r'OwnerReference\((?:schema\.GroupVersionKind\{Group:\s*"([^"]*)",\s*Version:\s*"([^"]*)",'
        r'\s*Kind:\s*"([^"]*)"\}|corev1\.SchemeGroupVersion\.WithKind\("([^"]*)"\))',
        expr,
    ):
        if m.group(4):
            owners.append({"apiVersion": "v1", "kind": m.group(4)})
        else:
            owners.append(
                {
                    "apiVersion": f"{m.group(1)}/{m.group(2)}" if m.group(1) else m.group(2),
                    "kind": m.group(3),
                }
            )
    podsets = []
    for m in re.finditer(r'MakePodSetAssignment\("([^"]+)"\)\.Count\((\d+)\)', expr):
        rest = expr[m.end() :]
        levels = parse_levels(
            go_expression(
                rest[rest.index("MakeTopologyAssignment(") + len("MakeTopologyAssignment(") :]
            ),
            named,
        )
        ta = rest[
            : rest.find("MakePodSetAssignment(") if "MakePodSetAssignment(" in rest else len(rest)
        ]
        domains = [
            {"values": _string_list(v), "count": int(c)}
            for c, v in re.findall(r"Count:\s*(\d+),\s*Values:\s*\[\]string\{([^}]*)\}", ta)
        ]
        podsets.append(
            {"name": m.group(1), "count": int(m.group(2)), "levels": levels, "domains": domains}
        )
    unhealthy = re.search(r"UnhealthyNodes\(([^)]*)\)", expr)
    out: dict = {
        "owners": owners,
        "podSetAssignments": podsets,
        "unhealthyNodes": _string_list(unhealthy.group(1)) if unhealthy else [],
    }
    if "IsGroupWorkloadAnnotationKey" in expr:
        out["annotations"] = {"kueue.x-k8s.io/is-group-workload": "true"}
    return out


def _case_extras(case: dict, block: str) -> None:
    """Non-TAS pods, the flavor's node labels and prior usage of a case, where given."""
    pods = field_expr(block, "pods")
    if pods:
        case["pods"] = parse_pods(pods)
    node_labels = field_expr(block, "nodeLabels")
    if node_labels:
        case["nodeLabels"] = {
            label(k): v for k, v in re.findall(r'([\w.]+|"[^"]+"):\s*"([^"]*)"', node_labels)
        }
    workload = field_expr(block, "workload")
    if workload:
        case["admitted"] = parse_admitted(workload, {})
    for field, flavor in (("priorOwnUsage", "own"), ("priorFlavorUsage", "sibling")):
        usage = field_expr(block, field)
        if usage:
            case.setdefault("priorUsage", []).extend(
                {"flavor": flavor, **u} for u in parse_usage(usage)
            )


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
            case["nodes"] = (
                named_nodes[nodes_expr]
                if nodes_expr in named_nodes
                else parse_rack_nodes(nodes_expr)
                if (nodes_expr or "").startswith("func()")
                else parse_nodes(nodes_expr or "")
            )
            case["levels"] = parse_levels(field_expr(block, "levels"), named_levels)
            case["podSets"] = parse_podsets(field_expr(block, "podSets"), named_levels)
            _case_extras(case, block)
        except (AttributeError, KeyError, ValueError, TypeError) as exc:
            why = why or f"not transcribed automatically ({type(exc).__name__}: {exc})"
        if why:
            case = {"name": case["name"], "skip": why}
        out.append(case)
    header = (
        "# Kueue TestFindTopologyAssignments (pkg/cache/scheduler/tas_cache_test.go @ "
        f"{KUEUE_COMMIT})\n"
        "# re-expressed as data by tests/kueue/extract_kueue_cases.py; cpu requests in "
        "milli-cores\n"
    )
    dumper = type("NoAliases", (yaml.SafeDumper,), {"ignore_aliases": lambda self, data: True})
    sys.stdout.write(
        header
        + yaml.dump(
            {"commit": KUEUE_COMMIT, "cases": out}, Dumper=dumper, sort_keys=False, width=120
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
