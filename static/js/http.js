// JSON over HTTP for the pages that fetch their frames and runs: every reply is an object, and a
// reply that is not JSON (a proxy's error page) becomes {ok: false, error} like the API's own.
export async function getJSON(url, init) {
  const res = await fetch(url, init);
  try { return await res.json(); } catch (e) { return { ok: false, error: { message: `${res.status} ${res.statusText}` } }; }
}

/** POST a JSON body. */
export function postJSON(url, body) {
  return getJSON(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

/** A reply answered 202 with a background job ({ok, job: {url, state}}): poll the job quietly until
 *  it ends. The finished reply has the shape a quick answer has; a failed or cancelled job gives
 *  {ok: false, error}. Any other reply passes through. (jobs.js's followJob does the same with a
 *  toast and a Cancel button, for work the user started by hand.) */
export async function settleJob(reply, pollMs = 400) {
  while (reply && reply.ok && reply.job && reply.job.url) {
    const state = reply.job.state;
    if (state === "done") return { ok: true, ...reply.job.result };
    if (state !== "queued" && state !== "running") return { ok: false, error: reply.job.error };
    await new Promise(resolve => setTimeout(resolve, pollMs));
    reply = await getJSON(reply.job.url);
  }
  return reply;
}
