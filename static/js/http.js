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
