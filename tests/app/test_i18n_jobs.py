"""A background job's words in the language of the request reading it (issue 33): its stage as
``stage_text`` (``stage`` stays the English name scripts compare) and its error, with the field
kept English; the same job read by an English page stays English."""
import re
import threading

from app.errors import UserError
from app.i18n.job_text import localized_job
from app.jobs import Job

HAN = re.compile(r"[\u4e00-\u9fff]")
ZH = {"Accept-Language": "zh-CN"}


def _pool(app):
    return app.extensions["isrlab"]["jobs"]


def test_a_running_jobs_stage_in_the_readers_language(app, http):
    release = threading.Event()

    def work(job):
        job.report(stage="simulating")
        release.wait(10)
        return {"saved": True}

    job = _pool(app).submit("save", work, owner="127.0.0.1")
    try:
        for _ in range(200):
            if job.progress.get("stage"):
                break
            threading.Event().wait(0.01)
        zh = http.get(f"/api/jobs/{job.id}", headers=ZH).get_json()["job"]
        en = http.get(f"/api/jobs/{job.id}", headers={"Accept-Language": "en"}).get_json()["job"]
        assert zh["progress"] == {"stage": "simulating", "stage_text": "正在模拟"}
        assert en["progress"] == {"stage": "simulating", "stage_text": "simulating"}
    finally:
        release.set()
    assert job.wait(10)


def test_a_failed_jobs_error_in_the_readers_language(app, http):
    def work(job):
        job.report(stage="saving")
        raise UserError("scenario.brokers", "0 is out of range", "an integer from 1 to 64")

    job = _pool(app).submit("save", work, owner="127.0.0.1")
    assert job.wait(10)
    zh = http.get(f"/api/jobs/{job.id}", headers=ZH).get_json()["job"]
    assert zh["state"] == "failed" and zh["progress"]["stage_text"] == "正在保存"
    assert zh["error"] == {"field": "scenario.brokers", "message": "0 超出范围", "allowed": "1 到 64 之间的整数"}
    en = http.get(f"/api/jobs/{job.id}").get_json()["job"]
    assert en["error"]["message"] == "0 is out of range"
    # cancelling answers in the reader's language too
    assert http.delete(f"/api/jobs/{job.id}", headers=ZH).get_json()["job"]["error"]["message"] == "0 超出范围"


def test_why_a_job_stopped_in_chinese(app):
    job = Job("save", None, 2.5, "small")
    with app.test_request_context("/?lang=zh-CN"):
        view = localized_job({"error": {"field": "job", "message": job.stop_reason(), "allowed": None}})
        assert view["error"]["message"] == "超过时间上限 2.5 s 后已停止"
        job.cancel()
        assert localized_job({"error": {"field": "job", "message": job.stop_reason()}})["error"]["message"] == "已取消"
        # a search's view: a string error, a stage
        search = localized_job({"id": "x", "state": "running", "progress": {"stage": "shrinking", "done": 3},
                                "error": None, "report": None})
        assert search["progress"] == {"stage": "shrinking", "done": 3, "stage_text": "正在收缩"}
    with app.test_request_context("/?lang=en"):
        assert localized_job({"progress": {"stage": "searching"}})["progress"]["stage_text"] == "searching"


def test_a_searchs_verdict_in_chinese(app):
    detail = ("1 record(s) acknowledged with acks=all are not in the leader's log (e.g. p1-7 acked at offset 6 at "
              "5012 ms; the leader has nothing there, LEO 5)")
    report = {"found": True, "property_text": "no acknowledged record is lost",
              "message": f"no acknowledged record is lost: broken — {detail}"}
    with app.test_request_context("/?lang=zh-CN"):
        view = localized_job({"id": "x", "state": "done", "progress": {"stage": "done"}, "report": report, "error": None})
        assert view["report"]["property_text"] == "不丢失任何已确认的消息"
        assert view["report"]["message"].startswith("不丢失任何已确认的消息：被打破——1 条以 acks=all 确认的消息不在领导者的日志中")
        assert "p1-7" in view["report"]["message"] and "LEO 5" in view["report"]["message"]
        none = localized_job({"report": {"found": False, "message": "not found in 40 runs (runs, 3.2 s)",
                                         "property_text": "no partition is offline longer than 5000 ms"}})["report"]
        assert none == {"found": False, "message": "在 40 次运行中没有找到（runs，3.2 s）",
                        "property_text": "没有分区离线超过 5000 ms"}
    with app.test_request_context("/?lang=en"):
        assert localized_job({"report": report})["report"] == report
