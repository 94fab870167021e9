"""A tool call's arguments: parsed as JSON when they come as text, checked against the tool's schema.

The TypeScript dispatcher validates with ajv and reports ajv's first error;
here jsonschema finds every error and the one ajv would have met first is
described, in the same words (``describe`` in clients/ts/src/tools/dispatcher.ts).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft7Validator, ValidationError

Args = dict[str, Any]

# The order ajv (draft 7, allErrors off) checks the keywords the catalogue uses
# in, so the order its first error comes from: a value's type first, then enum,
# then its number, string or array bounds; for an object, required, then
# additionalProperties, then each property in the schema's order; for an
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
_RANK = {keyword: rank for rank, keyword in enumerate(KEYWORD_ORDER)}


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
    return {key: _well_formed(item) for key, item in value.items()}


def _well_formed(value: Any) -> Any:
    """``value`` with each lone surrogate (half of a "\\ud83d\\ude00" pair) as U+FFFD, as JavaScript encodes it to UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return value
    if isinstance(value, list):
        return [_well_formed(item) for item in value]
    if isinstance(value, dict):
        return {key: _well_formed(item) for key, item in value.items()}
    return value


class Schema:
    """One tool's argument schema."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self._schema = schema
        self._validator = Draft7Validator(schema)

    def problem(self, args: Args) -> str | None:
        """What is wrong with ``args``, in the words every client uses; None when they fit the schema."""
        errors = list(self._validator.iter_errors(args))
        if not errors:
            return None
        return describe(min(errors, key=self._ajv_order))

    def _ajv_order(self, error: ValidationError) -> list[tuple[int, int]]:
        """Sorts errors in the order ajv would meet them: by where they are, step by step, then by keyword."""
        key = []
        schema = self._schema
        for step in error.absolute_path:
            if isinstance(step, int):
                key.append((_RANK["items"], step))
                schema = schema["items"]
            else:
                key.append((_RANK["properties"], list(schema["properties"]).index(step)))
                schema = schema["properties"][step]
        key.append((_RANK.get(str(error.validator), len(_RANK)), 0))
        return key


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
        unknown = next(name for name in instance if name not in known)
        return f"{where}unknown argument {unknown}"
    if keyword == "type":
        # "a array", "a object": the TypeScript writes "a " before every type but integer.
        return f"{where}must be {'an integer' if limit == 'integer' else 'a ' + str(limit)}"
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
