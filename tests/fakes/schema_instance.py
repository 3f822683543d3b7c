"""A minimal valid instance of a JSON schema (the subset pydantic and OpenAI use): what
the fake OpenAI server answers a structured-output call with when no reply is scripted."""

from __future__ import annotations

import math
from typing import Any

_STRING_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "email": "a@example.com",
    "uri": "http://example.com/",
}


def _resolve_ref(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for key in ref.removeprefix("#/").split("/"):
        node = node[key.replace("~1", "/").replace("~0", "~")]
    return dict(node)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null"


def minimal_instance(
    schema: dict[str, Any], root: dict[str, Any] | None = None, seen: frozenset[str] = frozenset()
) -> Any:
    """A small value that validates against ``schema`` (the subset pydantic and OpenAI use)."""
    root = schema if root is None else root
    if "$ref" in schema:
        ref = str(schema["$ref"])
        return minimal_instance(_resolve_ref(root, ref), root, seen | {ref})
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for union in ("anyOf", "oneOf"):
        if union in schema:
            options = list(schema[union])
            # A recursive model is only finite through its nullable branch, so a $ref already
            # being expanded loses to null.
            fresh = [o for o in options if not _is_null(o) and o.get("$ref") not in seen]
            if fresh:
                return minimal_instance(fresh[0], root, seen)
            return (
                None
                if any(_is_null(o) for o in options)
                else minimal_instance(options[0], root, seen)
            )
    if "allOf" in schema:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve_ref(root, part["$ref"]) if "$ref" in part else part
            for key, value in part.items():
                if key == "properties":
                    merged.setdefault("properties", {}).update(value)
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *value]
                else:
                    merged.setdefault(key, value)
        return minimal_instance(merged, root, seen)

    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if not kinds:
            return None
        kind = kinds[0]
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: minimal_instance(properties.get(name, {}), root, seen)
            for name in schema.get("required", [])
        }
    if kind == "array":
        prefix = schema.get("prefixItems", [])
        out = [minimal_instance(item, root, seen) for item in prefix]
        items = schema.get("items")
        while len(out) < int(schema.get("minItems", 0)):
            out.append(minimal_instance(items if isinstance(items, dict) else {}, root, seen))
        return out
    if kind == "string":
        if schema.get("format") in _STRING_FORMATS:
            return _STRING_FORMATS[schema["format"]]
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        return _minimal_number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    return None


def _minimal_number(schema: dict[str, Any], *, integer: bool) -> int | float:
    step = 1 if integer else 0.5
    value: float = 0
    raised = False
    if "minimum" in schema and value < schema["minimum"]:
        value, raised = schema["minimum"], True
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        value, raised = schema["exclusiveMinimum"] + step, True
    if "maximum" in schema and value > schema["maximum"]:
        value, raised = schema["maximum"], False
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value, raised = schema["exclusiveMaximum"] - step, False
    if integer:
        # Round toward the inside of the bound that moved the value.
        return math.ceil(value) if raised else math.floor(value)
    return value
