"""A background job's words in the language of the request reading it (issue 33): its error
(``{field, message, allowed}``, translated as every error reply is) and the stage it reports.

A job runs in a thread or a worker process, away from any request, and may be read by pages of
either language; so it keeps its words in English — the stage is a name scripts compare
(``"shrinking"``) — and each reply translates them: ``progress.stage`` stays as it is, and
``progress.stage_text`` says it in the reader's language. The stage names are msgids
(``app/commandline.py``'s ``STAGES``, which the command line shows too).
"""
from .errors import localized, translate_message
from .narration import localized_narration, translate_sentence
from .text import _

BROKEN = ": broken — "        # app/counterexample/service.py: "<property>: broken — <the violation's detail>"


def localized_progress(progress):
    """``progress`` plus ``stage_text``: its stage in the request's language."""
    if not isinstance(progress, dict) or not isinstance(progress.get("stage"), str):
        return progress
    return {**progress, "stage_text": translate_message(progress["stage"])}


def localized_report(report):
    """A counterexample search's report with its property, verdict and narration in the request's
    language (the verdict's detail and the steps are the engine's: ``app/i18n/narration.py``)."""
    if not isinstance(report, dict):
        return report
    out = dict(report)
    if isinstance(out.get("property_text"), str):
        out["property_text"] = translate_message(out["property_text"])
    message = out.get("message")
    if isinstance(message, str) and BROKEN in message:
        prop, detail = message.split(BROKEN, 1)
        out["message"] = _("%(property)s: broken — %(detail)s", property=translate_message(prop),
                           detail=translate_sentence(detail)[0])
    elif isinstance(message, str):
        out["message"] = translate_message(message)
    if "narration" in out:
        out["narration"] = localized_narration(out["narration"])
    return out


def localized_job(view):
    """A copy of a job's view (``app.jobs.Job.view``, the counterexample search's, a report
    job's) with its error and stage in the request's language."""
    if not isinstance(view, dict):
        return view
    out = dict(view)
    if "progress" in out:
        out["progress"] = localized_progress(out["progress"])
    if "report" in out:
        out["report"] = localized_report(out["report"])
    if isinstance(out.get("error"), dict):
        out["error"] = localized(out["error"])
    elif isinstance(out.get("error"), str):
        out["error"] = translate_message(out["error"])
    return out
