// One status per sweep. The sweep's stored status, whether its analysis exists and the Spark job
// working on it were shown side by side ("done", "running" and "not analysed" at once); here they
// are folded into a single state, with the job's steps (Spark's start is a step of its own: it
// takes tens of seconds with nothing to count) and one progress bar.
import { t } from "../i18n.js";

// the steps' names, and the pill's words while a step runs ("simulate runs…")
const SWEEP_STEPS = [t("Start Spark"), t("Simulate runs"), t("Analyse")];
const SWEEP_RUNNING = [t("start spark…"), t("simulate runs…"), t("analyse…")];
// the analysis command reports nothing until it ends: one step, no made-up split
const ANALYSE_STEPS = [t("Start Spark and analyse")];
const ANALYSE_RUNNING = [t("start spark and analyse…")];

function liveJob(job) {
  return job && (job.state === "running" || job.state === "starting") ? job : null;
}

// {state, label, detail, steps, step, done, total}: state is one of running, failed, stopped,
// planned, not-analysed, done; `done`/`total` fill the bar (null: no bar)
export function sweepStatus(sweep, analysed, job) {
  const total = sweep?.runs_total ?? null;
  const stored = sweep?.runs_done ?? 0;
  const live = liveJob(job);
  if (live) {
    const p = live.progress || {};
    const steps = live.kind === "sweep" ? SWEEP_STEPS : ANALYSE_STEPS;
    let step = 0;
    if (live.kind === "sweep") step = live.result && live.result.sweep ? 2 : p.total ? 1 : 0;
    const detail = [];
    if (step === 1 && live.kind === "sweep") {
      detail.push(t("{done}/{total} runs", { done: p.done ?? 0, total: p.total }));
      if (p.rate_per_s) detail.push(t("{rate} runs/s", { rate: p.rate_per_s.toFixed(1) }));
      if (p.eta_s !== null && p.eta_s !== undefined && p.done < p.total) detail.push(t("{s} s left", { s: Math.ceil(p.eta_s) }));
    }
    const counted = step === 1 && live.kind === "sweep";
    const running = live.kind === "sweep" ? SWEEP_RUNNING : ANALYSE_RUNNING;
    return { state: "running", label: running[step], detail: detail.join(", "), steps, step,
      done: counted ? p.done ?? 0 : step, total: counted ? p.total : steps.length };
  }
  if (job && job.state === "failed") {
    return { state: "failed", label: job.kind === "sweep" ? t("sweep failed") : t("analysis failed"),
      detail: job.errors && job.errors.length ? job.errors[job.errors.length - 1] : t("exit code {code}", { code: job.returncode }),
      done: null, total: null };
  }
  const base = { detail: "", done: null, total: null };
  if (!sweep) return { ...base, state: "planned", label: t("starting") };
  if (sweep.status === "failed") return { ...base, state: "failed", label: t("failed"), detail: sweep.message || "" };
  if (sweep.status === "running") {
    // running with no job of this server: a sweep started from the command line (or orphaned)
    return { ...base, state: "running", label: t("simulating runs…"), detail: t("{done}/{total} runs stored", { done: stored, total }),
      done: stored, total };
  }
  if (sweep.status === "stopped") {
    return { ...base, state: "stopped", label: t("stopped"), detail: t("{done}/{total} runs stored", { done: stored, total }), done: stored, total };
  }
  if (sweep.status === "planned") return { ...base, state: "planned", label: t("planned"), detail: t("{n} runs", { n: total }) };
  if (!analysed) return { ...base, state: "not-analysed", label: t("not analysed"), detail: t("{done}/{total} runs stored", { done: stored, total }) };
  return { ...base, state: "done", label: t("done"), detail: t("{n} runs analysed", { n: total }) };
}

// Draw a status into `box` (built here, so every place shows the same parts in the same order).
export function showStatus(box, status) {
  box.replaceChildren();
  box.className = `an-status ${status.state}`;
  box.dataset.state = status.state;
  const pill = document.createElement("span");
  pill.className = "an-pill";
  pill.textContent = status.label;
  box.appendChild(pill);
  if (status.steps) {
    const ol = document.createElement("ol");
    ol.className = "an-steps";
    status.steps.forEach((name, i) => {
      const li = document.createElement("li");
      li.textContent = name;
      li.className = i < status.step ? "done" : i === status.step ? "current" : "";
      ol.appendChild(li);
    });
    box.appendChild(ol);
  }
  if (status.total) {
    const bar = document.createElement("div");
    bar.className = "an-bar";
    bar.setAttribute("role", "progressbar");
    bar.setAttribute("aria-valuemin", "0");
    bar.setAttribute("aria-valuemax", String(status.total));
    bar.setAttribute("aria-valuenow", String(status.done));
    const fill = document.createElement("div");
    fill.className = "an-bar-fill";
    fill.style.width = `${Math.min(100, (100 * status.done) / status.total)}%`;
    bar.appendChild(fill);
    box.appendChild(bar);
  }
  if (status.detail) {
    const d = document.createElement("span");
    d.className = "an-status-detail small dim";
    d.textContent = status.detail;
    box.appendChild(d);
  }
}
