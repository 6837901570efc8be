"""``/v1/jobs``: one job with its telemetry, and pages of jobs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from api.deps import Context, require_token
from api.openapi import V1_RESPONSES, problem
from api.schemas import MAX_SESSION_ID_CHARS, JobOut, JobPage, JobStatus, Name
from worker.store import jobs
from worker.store.models import JobRow

router = APIRouter(
    prefix="/v1/jobs",
    tags=["jobs"],
    dependencies=[Depends(require_token)],
    responses=V1_RESPONSES,
)


def job_out(row: JobRow) -> JobOut:
    return JobOut.model_validate(
        jobs.job_telemetry(row)
        | {
            "focus_topic": row.focus_topic,
            "force": row.force,
            "target_tokens": row.target_tokens,
            "upto_seq": row.upto_seq,
            "version_after": row.version_after,
            "callback_status": row.callback_status,
        }
    )


@router.get(
    "/{job_id}",
    operation_id="getJob",
    response_model=JobOut,
    responses={404: problem("no job with this id")},
)
def get_job(job_id: Annotated[Name, Path(max_length=36)], context: Context) -> JobOut:
    """The job and its telemetry."""
    return job_out(jobs.get_job(context.db, job_id=job_id))


@router.get(
    "",
    operation_id="listJobs",
    response_model=JobPage,
    responses={404: problem("before names no job")},
)
def list_jobs(
    context: Context,
    session_id: Annotated[Name | None, Query(max_length=MAX_SESSION_ID_CHARS)] = None,
    status: JobStatus | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[Name | None, Query(max_length=36, description="a job id")] = None,
) -> JobPage:
    """Newest first; pass ``next_before`` as ``before`` for the next page."""
    rows = jobs.list_jobs(
        context.db, session_id=session_id, status=status, limit=limit, before=before
    )
    next_before = rows[-1].id if len(rows) == limit else None
    return JobPage(jobs=[job_out(r) for r in rows], next_before=next_before)
