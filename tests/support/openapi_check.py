"""Check real HTTP exchanges against the API's own OpenAPI document with openapi-core.

``Recorder`` keeps every request and answer an httpx client saw; ``check_answer`` says whether
the document knows the answer: its status for that operation (explicitly: no ``default``), its
media type, body and headers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import httpx
from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.exceptions import OpenAPIError
from werkzeug.datastructures import Headers, ImmutableMultiDict


def openapi_for(document: dict[str, Any]) -> OpenAPI:
    """openapi-core over ``document``; it reads problem+json bodies as JSON too."""
    config = Config(extra_media_type_deserializers={"application/problem+json": json.loads})
    return OpenAPI.from_dict(document, config=config)


class HttpxRequest:
    """An httpx request as openapi-core's ``Request`` protocol."""

    def __init__(self, request: httpx.Request) -> None:
        self._request = request
        query = parse_qsl(request.url.query.decode(), keep_blank_values=True)
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(query),
            header=Headers(list(request.headers.items())),
            cookie=ImmutableMultiDict(),
        )

    @property
    def host_url(self) -> str:
        return f"{self._request.url.scheme}://{self._request.url.netloc.decode()}"

    @property
    def path(self) -> str:
        return self._request.url.path

    @property
    def method(self) -> str:
        return self._request.method.lower()

    @property
    def body(self) -> bytes | None:
        return self._request.content or None

    @property
    def content_type(self) -> str:
        return self._request.headers.get("content-type", "").lower()


class WebhookRequest(HttpxRequest):
    """A request the service sends to a gateway, named by its webhook."""

    def __init__(self, request: httpx.Request, name: str) -> None:
        super().__init__(request)
        self.name = name


class HttpxResponse:
    """An httpx response as openapi-core's ``Response`` protocol."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status_code(self) -> int:
        return self._response.status_code

    @property
    def content_type(self) -> str:
        return self._response.headers.get("content-type", "").lower()

    @property
    def headers(self) -> Headers:
        return Headers(list(self._response.headers.items()))

    @property
    def data(self) -> bytes | None:
        return self._response.content or None


@dataclass
class Recorder:
    """Every answer a client received, in order (install with ``record(client)``)."""

    answers: list[httpx.Response] = field(default_factory=list)

    def record(self, client: httpx.Client) -> None:
        hooks = client.event_hooks
        client.event_hooks = {**hooks, "response": [*hooks["response"], self._keep]}

    def _keep(self, response: httpx.Response) -> None:
        response.read()
        self.answers.append(response)


def check_answer(openapi: OpenAPI, document: dict[str, Any], answer: httpx.Response) -> str:
    """The problem with ``answer`` against the document, or "" when the document knows it."""
    request = answer.request
    path_item = _path_item(document, request.url.path)
    if path_item is None:
        return f"{request.method} {request.url.path}: no documented path"
    operation = path_item.get(request.method.lower())
    if operation is None:
        return f"{request.method} {request.url.path}: method not documented"
    if str(answer.status_code) not in operation["responses"]:
        return f"{operation['operationId']}: status {answer.status_code} is not documented"
    try:
        openapi.validate_response(HttpxRequest(request), HttpxResponse(answer))
    except OpenAPIError as exc:
        return f"{operation['operationId']} {answer.status_code}: {_explain(exc)}"
    return ""


def _explain(exc: BaseException) -> str:
    causes = [repr(exc)]
    inner: BaseException | None = exc.__cause__
    while inner is not None:
        causes.append(repr(inner))
        inner = inner.__cause__
    details = getattr(exc, "schema_errors", None) or getattr(exc.__cause__, "schema_errors", None)
    if details:
        causes.extend(str(e.message) for e in details)
    return " <- ".join(causes)


def _path_item(document: dict[str, Any], path: str) -> dict[str, Any] | None:
    """The path item whose template matches ``path``; literal segments win over parameters."""
    segments = path.strip("/").split("/")
    best: tuple[int, dict[str, Any]] | None = None
    for template, item in document["paths"].items():
        parts = template.strip("/").split("/")
        if len(parts) != len(segments):
            continue
        literal = [not (p.startswith("{") and p.endswith("}")) for p in parts]
        matches = all(not lit or p == s for p, s, lit in zip(parts, segments, literal, strict=True))
        if matches and (best is None or sum(literal) > best[0]):
            best = (sum(literal), item)
    return None if best is None else best[1]


def operation_id(document: dict[str, Any], answer: httpx.Response) -> str:
    item = _path_item(document, answer.request.url.path)
    assert item is not None, answer.request.url
    return str(item[answer.request.method.lower()]["operationId"])
