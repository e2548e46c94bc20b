// One status per sweep. The sweep's stored status, whether its analysis exists and the Spark job
// working on it were shown side by side ("done", "running" and "not analysed" at once); here they
// are folded into a single state, with the job's steps (Spark's start is a step of its own: it
// takes tens of seconds with nothing to count) and one progress bar.

const SWEEP_STEPS = ["Start Spark", "Simulate runs", "Analyse"];
// the analysis command reports nothing until it ends: one step, no made-up split
const ANALYSE_STEPS = ["Start Spark and analyse"];

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
      detail.push(`${p.done ?? 0}/${p.total} runs`);
      if (p.rate_per_s) detail.push(`${p.rate_per_s.toFixed(1)} runs/s`);
      if (p.eta_s !== null && p.eta_s !== undefined && p.done < p.total) detail.push(`${Math.ceil(p.eta_s)} s left`);
    }
    const counted = step === 1 && live.kind === "sweep";
    return { state: "running", label: `${steps[step].toLowerCase()}…`, detail: detail.join(", "), steps, step,
      done: counted ? p.done ?? 0 : step, total: counted ? p.total : steps.length };
  }
  if (job && job.state === "failed") {
    return { state: "failed", label: `${job.kind === "sweep" ? "sweep" : "analysis"} failed`,
      detail: job.errors && job.errors.length ? job.errors[job.errors.length - 1] : `exit code ${job.returncode}`,
      done: null, total: null };
  }
  const base = { detail: "", done: null, total: null };
  if (!sweep) return { ...base, state: "planned", label: "starting" };
  if (sweep.status === "failed") return { ...base, state: "failed", label: "failed", detail: sweep.message || "" };
  if (sweep.status === "running") {
    // running with no job of this server: a sweep started from the command line (or orphaned)
    return { ...base, state: "running", label: "simulating runs…", detail: `${stored}/${total} runs stored`,
      done: stored, total };
  }
  if (sweep.status === "stopped") {
    return { ...base, state: "stopped", label: "stopped", detail: `${stored}/${total} runs stored`, done: stored, total };
  }
  if (sweep.status === "planned") return { ...base, state: "planned", label: "planned", detail: `${total} runs` };
  if (!analysed) return { ...base, state: "not-analysed", label: "not analysed", detail: `${stored}/${total} runs stored` };
  return { ...base, state: "done", label: "done", detail: `${total} runs analysed` };
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
