"""Kubernetes' rules for object names (k8s.io/apimachinery/pkg/util/validation).

Pod and node names are DNS subdomains (RFC 1123: at most 253 characters, lowercase letters,
digits, ``-`` and ``.``, alphanumeric at both ends of each dot-separated part); namespace names
are DNS labels (the same, at most 63 characters, no dot).
"""

from __future__ import annotations

import re

DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = rf"{DNS_LABEL}(\.{DNS_LABEL})*"
_LABEL = re.compile(DNS_LABEL)
_SUBDOMAIN = re.compile(DNS_SUBDOMAIN)


def dns_subdomain_problem(name: str) -> str | None:
    """Why ``name`` is not a DNS subdomain (a pod or node name), or None."""
    if len(name) <= 253 and _SUBDOMAIN.fullmatch(name):
        return None
    return (f"{_show(name)} is not a DNS subdomain (at most 253 lowercase letters, digits, '-' "
            "and '.', alphanumeric at both ends)")


def dns_label_problem(name: str) -> str | None:
    """Why ``name`` is not a DNS label (a namespace name), or None."""
    if len(name) <= 63 and _LABEL.fullmatch(name):
        return None
    return (f"{_show(name)} is not a DNS label (at most 63 lowercase letters, digits and '-', "
            "alphanumeric at both ends)")


def _show(name: str) -> str:
    return repr(name) if len(name) <= 60 else f"{name[:40]!r}… ({len(name):,} characters)"
