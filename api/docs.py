"""``/docs``: Swagger UI served from the files of the swagger-ui-bundle-v2 package.

FastAPI's own page loads Swagger UI from a CDN, so it is blank on a machine without internet
access. This page loads nothing from elsewhere: the script, the stylesheet and the icon are
ours, under ``/docs/assets``, and Swagger UI's online validator badge is off.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

DOCS_URL = "/docs"
ASSETS_URL = "/docs/assets"


def install_docs(app: FastAPI) -> None:
    """Serve Swagger UI at ``/docs`` for the app's ``openapi_url``, and its files."""
    app.mount(ASSETS_URL, StaticFiles(directory=swagger_ui_path), name="swagger-ui")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get(DOCS_URL, include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - API",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon-32x32.png",
            # Swagger UI would otherwise send the document to validator.swagger.io for a badge.
            swagger_ui_parameters={"validatorUrl": None},
        )
