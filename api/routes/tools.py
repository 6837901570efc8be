"""``GET /v1/tools``: the tool definitions a gateway hands its model (api/tools.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from api.deps import require_token
from api.openapi import V1_RESPONSES
from api.schemas_archive import ToolsOut
from api.tools import TOOLS

# Static data: no parameter to refuse, no database to miss.
router = APIRouter(
    prefix="/v1/tools",
    tags=["tools"],
    dependencies=[Depends(require_token)],
    responses={status: V1_RESPONSES[status] for status in (401, 500)},
)


@router.get("", operation_id="listTools", response_model=ToolsOut)
def list_tools() -> ToolsOut:
    """``recall`` and ``recall_message`` in the OpenAI tools format, ready to add to the model's
    ``tools``. Run a call as its description says: ``recall`` is ``GET …/archive?q=&limit=``,
    ``recall_message`` is ``GET …/archive/{seq}?before=&after=``."""
    return ToolsOut(tools=list(TOOLS))
