// Background jobs: a request that starts heavy work (save a run from a scenario, import, fork)
// may be answered 202 with {job: {id, url, state, progress}}. followJob shows the job in a toast
// with its stage and a Cancel button, polls its URL, and resolves with the finished reply — the
// same shape a quick request gets directly — or with {ok: false, error} when it failed or was
// cancelled. Replies that are not a job pass through unchanged.
import { h } from "./dom.js";
import { t } from "./i18n.js";
import { toast } from "./ui/toast.js";

const POLL_MS = 500;

export async function followJob(reply, title = t("Working")) {
  if (!reply || !reply.ok || !reply.job || reply.job.state === "done") return reply;
  let job = reply.job;
  const el = toast(title, describe(job), "info", 10 * 60 * 1000);
  el.classList.add("job-toast");
  el.dataset.job = job.id;
  const cancel = h("button.small.ghost", { type: "button", text: t("Cancel"), onclick: () => {
    cancel.disabled = true;
    fetch(job.url, { method: "DELETE" }).catch(() => {});
  } });
  el.appendChild(h("div", null, cancel));
  try {
    for (;;) {
      await new Promise(resolve => setTimeout(resolve, POLL_MS));
      let res;
      try { res = await (await fetch(job.url)).json(); } catch (e) { continue; }   // a blip: ask again
      if (!res.ok) return res;
      job = res.job;
      const body = el.querySelector(".tbody");
      if (body) body.textContent = describe(job);
      if (job.state === "done") return { ok: true, ...job.result };
      if (job.state === "failed" || job.state === "cancelled") return { ok: false, error: job.error, job };
    }
  } finally {
    el.remove();
  }
}

function describe(job) {
  const stage = job.progress && (job.progress.stage_text || job.progress.stage);   // stage_text: the page's language
  const waited = job.started ? Math.round(Date.now() / 1000 - job.started) : 0;
  if (job.state === "queued") return t("waiting for a free worker…");
  const shown = stage || t("simulating");     // outside the template literal, where pybabel does not look
  return `${shown}… ${waited ? waited + " s" : ""}`.trim();
}
