// "Save run" on the live page: saves the session (its scenario with the live commands merged in,
// so it replays exactly) and offers the replay and its short link. Include it in the live page
// with <script type="module" src="/static/js/replay/live_save.js"></script>; it adds its buttons
// to the top bar's right-hand group and needs nothing else from the page than window.isrlab.
import { h } from "../dom.js";
import { toast } from "../ui/toast.js";
import { errorText } from "../format.js";
import { postJSON } from "../http.js";
import { followJob } from "../jobs.js";
import { t } from "../i18n.js";

async function save() {
  const app = window.isrlab;
  const room = app && app.store && app.store.room;
  if (!room) { toast(t("Nothing to save yet"), t("the simulation has not started")); return null; }
  // a slow save is answered as a background job: follow it to the saved run, like the replay's Save
  const reply = await followJob(await postJSON("/api/runs", { room }), t("Saving the run"));
  if (!reply.ok) { toast(t("Cannot save"), errorText(reply.error), "error"); return null; }
  const url = location.origin + reply.links.short;
  const el = toast(t("Saved: {title}", { title: reply.title }), url, "info", 15000);
  el.appendChild(h("div", null, h("a.button.small", { href: reply.links.page, text: t("Open the replay"), id: "saved-replay-link" })));
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(url).catch(() => {});
  window.isrlabSaved = reply;
  return reply;
}

function install() {
  const slot = document.querySelector("#topbar .topright");
  if (!slot || document.getElementById("save-run")) return;
  slot.prepend(h("button.ghost", { type: "button", id: "save-run", text: t("Save run"),
    title: t("Save this session as a run (replay it, share a short link)"), onclick: save }),
  h("a.button.ghost", { href: "/runs", id: "runs-link", text: t("Runs"), title: t("Saved runs") }));
}

install();
window.isrlabSaveRun = save;
