"""A tool call's arguments: parsed as JSON when they come as text, checked against the tool's schema.

The TypeScript dispatcher validates with ajv and reports ajv's first error;
here jsonschema is made to meet the same error first (``in_ajv_order``), and it
is described in the same words (``describe`` in clients/ts/src/tools/dispatcher.ts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft7Validator, ValidationError

Args = dict[str, Any]

# The order ajv (draft 7, allErrors off) checks the keywords the catalogue uses
# in, which decides which of several errors it reports: a value's type first,
# then enum, then its number, string or array bounds; for an object, required,
# then additionalProperties, then each property in the schema's order; for an
# array, its items in order. A test checks the catalogue uses no other keyword.
KEYWORD_ORDER = [
    "type",
    "enum",
    "maximum",
    "minimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "required",
    "additionalProperties",
    "properties",
    "items",
]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's json reads NaN and Infinity; JSON.parse does not


def parse(arguments: object) -> Args | str:
    """An arguments object, from a mapping or its JSON text; otherwise what is wrong with them."""
    value = {} if arguments is None else arguments
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}", parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return "the arguments are not valid JSON"
    if not isinstance(value, Mapping):
        return "the arguments must be a JSON object"
    return dict(value)


def without_nulls(schema: dict[str, Any], value: Any) -> Any:
    """``value`` without the optional arguments (at any depth the schema describes) that are None.

    Strict-mode models send null for what they leave out. A null for a
    required argument stays, for the schema to refuse.
    """
    if isinstance(value, list):
        items = schema.get("items")
        return value if items is None else [without_nulls(items, item) for item in value]
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    return {
        name: without_nulls(properties[name], item) if name in properties else item
        for name, item in value.items()
        if not (item is None and name in properties and name not in required)
    }


def well_formed(value: Any) -> Any:
    """``value`` with each lone surrogate (half of a "\\ud83d\\ude00" pair) as U+FFFD, as JavaScript encodes it to UTF-8.

    Run on arguments that fit their schema, so it recurses no deeper than the schema goes.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return value
    if isinstance(value, list):
        return [well_formed(item) for item in value]
    if isinstance(value, dict):
        return {key: well_formed(item) for key, item in value.items()}
    return value


def in_ajv_order(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each (sub)schema's keywords in KEYWORD_ORDER.

    jsonschema checks a schema's keywords in the order they are written and
    yields its errors lazily, so with the keywords in ajv's order its first
    error is ajv's, found without looking further (a huge argument that fails
    maxItems is not checked item by item). The exact pin of jsonschema and the
    tests that compare these texts with the TypeScript dispatcher's hold it.
    """
    rank = {keyword: i for i, keyword in enumerate(KEYWORD_ORDER)}
    ordered = {keyword: schema[keyword] for keyword in sorted(schema, key=lambda k: rank.get(k, len(rank)))}
    if "properties" in ordered:
        ordered["properties"] = {name: in_ajv_order(sub) for name, sub in ordered["properties"].items()}
    if "items" in ordered:
        ordered["items"] = in_ajv_order(ordered["items"])
    return ordered


class Schema:
    """One tool's argument schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._validator = Draft7Validator(in_ajv_order(schema))

    def accept(self, args: Args) -> Args | str:
        """``args`` without their null optional arguments when they fit the schema; otherwise what is wrong, in the words every client uses."""
        given = without_nulls(self._schema, args)
        error = next(self._validator.iter_errors(given), None)
        return given if error is None else describe(error)


_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")


def _javascript_order(keys: Iterable[Any]) -> list[Any]:
    """An object's keys in the order JavaScript gives them (ajv looks for unknown arguments in it):
    array indices ("0" to "4294967294") first, ascending, then the rest as written."""
    keys = list(keys)
    indices = {k for k in keys if isinstance(k, str) and _ARRAY_INDEX.fullmatch(k) and int(k) < 2**32 - 1}
    return sorted(indices, key=int) + [k for k in keys if k not in indices]


def describe(error: ValidationError) -> str:
    """One schema violation in the words of describe() in the TypeScript dispatcher."""
    path = ".".join(str(step) for step in error.absolute_path)
    where = f"{path} " if path else ""
    # Set on every error iter_errors yields (the stubs allow them unset, for errors made by hand).
    keyword = error.validator
    limit: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema
    if keyword == "required":
        missing = next(name for name in limit if name not in instance)
        return f"{where}missing required argument {missing}"
    if keyword == "additionalProperties":
        known = schema.get("properties", {})
        unknown = next(name for name in _javascript_order(instance) if name not in known)
        return f"{where}unknown argument {unknown}"
    if keyword == "type":
        article = "an" if str(limit)[:1] in "aeiou" else "a"
        return f"{where}must be {article} {limit}"
    if keyword == "enum":
        return f"{where}must be one of {', '.join(str(value) for value in limit)}"
    if keyword == "minimum":
        return f"{where}must be at least {limit}"
    if keyword == "maximum":
        return f"{where}must be at most {limit}"
    if keyword == "minLength":
        return f"{where}must not be empty"
    if keyword == "maxLength":
        return f"{where}must be at most {limit} characters"
    if keyword == "minItems":
        return f"{where}must have at least {limit} items"
    if keyword == "maxItems":
        return f"{where}must have at most {limit} items"
    return f"{where}{error.message}"
