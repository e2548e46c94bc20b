"""Background jobs over HTTP: ``GET /api/jobs/<id>`` (state, progress, and the result or error of
a finished job), ``DELETE /api/jobs/<id>`` (cancel). Jobs are started by the routes that need
them (saving, importing, forking) and answered ``202`` with this URL when they take a while."""
import re

from flask import current_app, jsonify, request

from ..errors import UserError
from ..i18n.job_text import localized_job
from .blueprint import bp

JOB_ID = re.compile(r"^[A-Za-z0-9_-]{8,20}$")


def _job(job_id):
    job = current_app.extensions["isrlab"]["jobs"].get(job_id) if JOB_ID.match(job_id) else None
    if job is None or (job.owner is not None and job.owner != request.remote_addr):
        raise UserError("job", "no such job (finished jobs are kept for ten minutes)", "a job id from a 202 reply",
                        status=404)
    return job


@bp.get("/api/jobs/<job_id>")
def api_job(job_id):
    return jsonify(ok=True, job=localized_job(_job(job_id).view()))


@bp.delete("/api/jobs/<job_id>")
def api_cancel_job(job_id):
    job = _job(job_id)
    job.cancel()
    return jsonify(ok=True, job=localized_job(job.view()))
