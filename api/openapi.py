"""The OpenAPI document says what the service really sends.

Routes declare their error answers with ``problem(...)`` and the headers of their answers with
the constants below; ``DocumentedApi`` files every 4xx and 5xx answer under
application/problem+json, because every error the service sends is rendered by ``api.errors``
(FastAPI would file a response model under the route's own media type, application/json).
Operation ids are written on each route (camelCase), so a generated client keeps its method
names when a function or a path is renamed.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from api.errors import PROBLEM_JSON
from api.schemas import Problem


def header(description: str, *, required: bool = True, type_: str = "string") -> dict[str, Any]:
    return {"description": description, "required": required, "schema": {"type": type_}}


ETAG = header('the session\'s version, quoted, e.g. "3": send it back in If-Match')
RETRY_AFTER = header("seconds to wait before retrying", type_="integer")
WWW_AUTHENTICATE = header('always Bearer realm="compaction"')


def problem(description: str, **headers: dict[str, Any]) -> dict[str, Any]:
    """An error answer: a ``Problem`` body, and the headers it always carries."""
    doc: dict[str, Any] = {"model": Problem, "description": description}
    if headers:
        doc["headers"] = headers
    return doc


UNAVAILABLE = (
    "the database is unavailable or busy past its timeout (detail names the error class): "
    "nothing was stored; retry after Retry-After seconds"
)

# Every /v1 operation: auth, parameters, a failure of ours, a database that does not answer.
V1_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: problem(
        "COMPACTION_API_TOKEN is set and the request has no valid `Authorization: Bearer "
        "<token>` header; checked before the body is read",
        **{"WWW-Authenticate": WWW_AUTHENTICATE},
    ),
    422: problem(
        "a path or query parameter, or the body, is invalid; errors lists each problem "
        "(nothing was stored)"
    ),
    500: problem("the server failed; its log has the cause"),
    503: problem(UNAVAILABLE, **{"Retry-After": RETRY_AFTER}),
}


def problem_media_type(document: dict[str, Any]) -> dict[str, Any]:
    """File every 4xx/5xx answer of every path under application/problem+json."""
    for path_item in document.get("paths", {}).values():
        for operation in path_item.values():
            for status, response in operation.get("responses", {}).items():
                content = response.get("content")
                if status[:1] in ("4", "5") and content and "application/json" in content:
                    content[PROBLEM_JSON] = content.pop("application/json")
    return document


class DocumentedApi(FastAPI):
    """FastAPI whose error answers are documented as application/problem+json."""

    def openapi(self) -> dict[str, Any]:
        if self.openapi_schema is None:
            self.openapi_schema = problem_media_type(super().openapi())
        return self.openapi_schema
