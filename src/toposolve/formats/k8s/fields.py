"""Typed, located access to fields of a parsed manifest.

Every value read from a manifest goes through a :class:`Field`, which knows the file, the object
(``Job/default/train``) and the manifest path (``spec.tasks[0].replicas``) it came from, so any
problem becomes one :class:`InputError` line naming all three. Pydantic errors raised while the
model is built are translated the same way by :func:`build`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_INTEGER
from toposolve.core.quantity import MilliUnits, QuantityError, parse_resource_amount
from toposolve.core.quantity import atoi as decimal  # Go's strconv.Atoi, for the readers

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Document:
    """One manifest object and where it was read from (``position`` counts across all files)."""

    body: dict[str, Any]
    file: str
    position: int

    @property
    def kind(self) -> str:
        return str(self.body.get("kind") or "")

    @property
    def api_group(self) -> str:
        """``batch.volcano.sh`` of ``batch.volcano.sh/v1alpha1``; ``""`` for the core group."""
        version = str(self.body.get("apiVersion") or "")
        return version.rsplit("/", 1)[0] if "/" in version else ""

    # -- object metadata, read leniently (checked reads go through Field) ------------------------

    @property
    def metadata(self) -> dict[str, Any]:
        """``metadata``; empty when absent or not a mapping."""
        meta = self.body.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        """``metadata.name``; ``""`` when unset."""
        return str(self.metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        """``metadata.namespace``; ``default`` when unset, as kubectl applies it."""
        return str(self.metadata.get("namespace") or "default")

    @property
    def declares_namespace(self) -> bool:
        """Whether ``metadata.namespace`` is set (how a skipped object of an unknown kind is
        named)."""
        return bool(self.metadata.get("namespace"))

    @property
    def labels(self) -> dict[str, str]:
        """``metadata.labels`` as strings; empty when absent or not a mapping."""
        return _string_dict(self.metadata.get("labels"))

    @property
    def annotations(self) -> dict[str, str]:
        """``metadata.annotations`` as strings; empty when absent or not a mapping."""
        return _string_dict(self.metadata.get("annotations"))

    def object_name(self, *, namespaced: bool) -> str:
        """``Kind/name`` or ``Kind/namespace/name`` (namespace ``default`` when unset)."""
        name = self.metadata.get("name", "?")
        if namespaced:
            return f"{self.kind}/{self.namespace}/{name}"
        return f"{self.kind}/{name}"


def _string_dict(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


@dataclass(frozen=True)
class Field:
    """A value at ``path`` inside object ``obj`` of ``file``; ``None`` stands for absent."""

    value: Any
    path: str
    file: str
    obj: str

    @classmethod
    def root(cls, doc: Document, obj: str) -> Field:
        return cls(doc.body, "", doc.file, obj)

    # -- navigation -------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Field:
        return Field(self.mapping().get(key), join_path(self.path, key), self.file, self.obj)

    def at(self, dotted: str) -> Field:
        """``f.at("spec.template.spec")``: successive keys (absent anywhere → absent)."""
        field = self
        for key in dotted.split("."):
            field = field[key]
        return field

    @property
    def present(self) -> bool:
        return self.value is not None

    def fail(self, message: str, *, suffix: str = "") -> InputError:
        """An error about this field (``suffix`` extends the path, e.g. ``.name``)."""
        return InputError(message, file=self.file, obj=self.obj, field=(self.path + suffix) or None)

    def mapping(self) -> dict[str, Any]:
        if self.value is None:
            return {}
        if not isinstance(self.value, dict):
            raise self.fail(f"expected a mapping, got {_show(self.value)}")
        return self.value

    def elements(self) -> list[Field]:
        """Items of a list (absent → empty)."""
        if self.value is None:
            return []
        if not isinstance(self.value, list):
            raise self.fail(f"expected a list, got {_show(self.value)}")
        return [
            Field(v, join_path(self.path, i), self.file, self.obj) for i, v in enumerate(self.value)
        ]

    def entries(self) -> Iterator[tuple[str, Field]]:
        """``(key, field)`` pairs of a mapping; keys are checked to be strings."""
        for key, value in self.mapping().items():
            if not isinstance(key, str):
                raise self.fail(f"keys must be strings, got {_show(key)}")
            yield key, Field(value, join_path(self.path, key), self.file, self.obj)

    # -- scalars ----------------------------------------------------------------------------

    def text(self, default: str | None = None, *, required: bool = False) -> str | None:
        if self.value is None:
            if required:
                raise self.fail("is required")
            return default
        if not isinstance(self.value, str):
            raise self.fail(f"expected a string, got {_show(self.value)}")
        return self.value

    def required_text(self) -> str:
        value = self.text(required=True)
        assert value is not None
        if not value:
            raise self.fail("must not be empty")
        return value

    def integer(
        self,
        default: int | None = None,
        *,
        minimum: int | None = None,
        maximum: int = MAX_INTEGER,
        required: bool = False,
        numeric_string: bool = False,
    ) -> int | None:
        """An integer in ``[minimum, maximum]`` (``maximum`` defaults to int64's, the API
        server's bound); ``numeric_string`` also accepts ``"2"`` (HyperNode tiers were strings)."""
        value = self.value
        if value is None:
            if required:
                raise self.fail("is required")
            return default
        if numeric_string and isinstance(value, str) and decimal(value.strip()) is not None:
            value = decimal(value.strip())
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"expected an integer, got {_show(self.value)}")
        if minimum is not None and value < minimum:
            raise self.fail(f"must be at least {minimum}, got {_short(value)}")
        if value > maximum or value < -MAX_INTEGER - 1:
            raise self.fail(f"must be at most {maximum:,}, got {_short(value)}")
        return value

    def boolean(self, default: bool) -> bool:
        if self.value is None:
            return default
        if not isinstance(self.value, bool):
            raise self.fail(f"expected true or false, got {_show(self.value)}")
        return self.value

    def string_map(self) -> dict[str, str]:
        """Labels, nodeSelector, matchLabels: string keys to string values."""
        out: dict[str, str] = {}
        for key, field in self.entries():
            value = field.text()
            if value is None:
                raise field.fail("expected a string, got null")
            out[key] = value
        return out

    def string_list(self) -> list[str]:
        out: list[str] = []
        for item in self.elements():
            value = item.text()
            if value is None:
                raise item.fail("expected a string, got null")
            out.append(value)
        return out

    def resources(self) -> MilliUnits:
        """A ``ResourceList`` (``{cpu: "4", memory: 8Gi}``) in milli-units."""
        return MilliUnits({name: field.quantity(name) for name, field in self.entries()})

    def quantity(self, resource: str | None = None) -> int:
        """A Kubernetes quantity in milli-units; YAML numbers are accepted as Kubernetes does
        (``resource`` names it, for the limit of its unit)."""
        if self.value is None:
            raise self.fail("expected a Kubernetes quantity, got null")
        try:
            return parse_resource_amount(self.value, resource)
        except QuantityError as exc:
            raise self.fail(str(exc)) from None


def check_keys(field: Field, allowed: Iterable[str]) -> None:
    """Reject a key of the mapping ``field`` that is not in ``allowed`` (the strict native
    format)."""
    allowed = tuple(allowed)
    for key in field.mapping():
        if key not in allowed:
            raise InputError(f"unknown key {key!r} (allowed: {', '.join(allowed)})",
                             file=field.file, obj=field.obj, field=join_path(field.path, str(key)))


def _short(number: int) -> str:
    """A number for a one-line message: huge ones by their digit count."""
    text = str(number)
    return text if len(text) <= 24 else f"a {len(text.lstrip('-'))}-digit number"


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


# -- pydantic errors back to manifest fields --------------------------------------------------

# model field names whose manifest spelling is not just camelCase
_MANIFEST_NAMES = {
    "partition": "partitionPolicy",
    "subgroup_policies": "subGroupPolicy",
    "priority_class": "priorityClassName",
    "exact_match": "exactMatch.name",
    "regex_match": "regexMatch.pattern",
    "affinity_terms": "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    ".nodeSelectorTerms",
}


def manifest_name(model_field: str) -> str:
    """``highest_tier_allowed`` → ``highestTierAllowed`` (with the exceptions above)."""
    if model_field in _MANIFEST_NAMES:
        return _MANIFEST_NAMES[model_field]
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), model_field)


def build(model: type[M], where: Field, renames: Mapping[str, str] | None = None,
          **values: Any) -> M:
    """``model(**values)``; a validation error names ``where`` plus the offending field's path.

    ``renames`` maps a model field to its manifest path relative to ``where`` when it is not the
    camelCase spelling (``{"requests": "template.spec.containers"}``).
    """
    try:
        return model(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        path = where.path
        for i, part in enumerate(first["loc"]):
            if isinstance(part, int):
                path = join_path(path, part)
            elif i == 0 and renames and part in renames:
                path = join_path(path, renames[part]) if renames[part] else path
            else:
                path = join_path(path, manifest_name(str(part)))
        message = str(first["msg"]).removeprefix("Value error, ")
        raise InputError(message, file=where.file, obj=where.obj, field=path or None) from None


def unread_annotations(keys: Iterable[str], prefix: str, known: Iterable[str]) -> list[str]:
    """The keys under ``prefix`` (a scheduler's annotations) that are not ``known`` to the
    reader, sorted: what the input asks of the scheduler that toposolve does not model."""
    known = set(known)
    return sorted({k for k in keys if k.startswith(prefix) and k not in known})


def unread_line(doc: Document, key: str, what: str = "annotation") -> str:
    """The one warning line for an annotation ``key`` of ``doc`` that is not read."""
    return (f"{doc.file}: {doc.object_name(namespaced=True)}: {what} {key}: not read by "
            "toposolve (its effect is not modelled)")

