"""Compose variable interpolation (`${VAR}`, `${VAR:-default}`, `${VAR:?error}`, `$$`), as the
Compose Specification defines it, and the schema the specification publishes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"\$(?:(?P<escaped>\$)|\{{(?P<braced>[^}}]*)\}}|(?P<plain>{_NAME}))")
_BRACED = re.compile(rf"(?P<name>{_NAME})(?:(?P<op>:?[-?+])(?P<arg>.*))?", re.DOTALL)


class MissingVariableError(KeyError):
    """A `${VAR:?message}` whose variable is unset (or empty)."""


def _expand(expr: str, env: Mapping[str, str]) -> str:
    match = _BRACED.fullmatch(expr)
    if match is None:
        raise ValueError(f"invalid interpolation ${{{expr}}}")
    name, op, arg = match["name"], match["op"], match["arg"] or ""
    value = env.get(name)
    unset = value is None or (op is not None and op.startswith(":") and value == "")
    if op in ("-", ":-"):
        return arg if unset else str(value)
    if op in ("?", ":?"):
        if unset:
            raise MissingVariableError(f"{name}: {arg}")
        return str(value)
    if op in ("+", ":+"):
        return "" if unset else arg
    return value or ""


def interpolate_text(text: str, env: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        if match["plain"]:
            return env.get(match["plain"], "")
        return _expand(match["braced"], env)

    return _REFERENCE.sub(replace, text)


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Interpolate every string value of a loaded compose document (keys stay as they are)."""
    if isinstance(value, str):
        return interpolate_text(value, env)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


def required_variables(text: str) -> set[str]:
    """Names the file requires with `${VAR:?…}` or `${VAR?…}`."""
    return {m[1] for m in re.finditer(rf"\$\{{({_NAME}):?\?", text)}


def referenced_variables(text: str) -> set[str]:
    unescaped = text.replace("$$", "")
    return {m[1] or m[2] for m in re.finditer(rf"\$(?:\{{({_NAME})|({_NAME}))", unescaped)}


def compose_spec_schema() -> dict[str, Any]:
    """The Compose Specification's JSON schema as vendored by check-jsonschema (Apache-2.0)."""
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads(vendor.joinpath("compose-spec.json").read_text(encoding="utf-8"))
    assert isinstance(schema, dict)
    return schema
