// The library of stories in the scenario picker: grouped by the kind of cluster they run on, with a
// search box (title, id, era, words of the guide), and the story's details beside the list.
import { h, clear } from "../dom.js";
import { t } from "../i18n.js";
import { storyName, storyDescription } from "../i18n_story.js";

// The groups, in the library's teaching order within each: which way an ISR change travels is
// what a learner picks first.
const GROUPS = [
  { id: "zk", title: t("ZooKeeper · the leader writes the ISR (0.10 – 2.6)"), test: v => !v.startsWith("2.7") && !v.startsWith("3.") && !v.startsWith("4.") },
  { id: "alter", title: t("ZooKeeper · AlterIsr / AlterPartition to the controller (2.7 – 3.7)"), test: v => /^(2\.7|3\.[0-7])$/.test(v) },
  { id: "kraft", title: t("KRaft · a Raft controller quorum (3.9-kraft, 4.1)"), test: v => v.includes("kraft") || v.startsWith("4.") },
];

/** The group a story belongs to, by its own era. */
export function groupOf(story) {
  const v = String(story.kafka_version);
  return (GROUPS.find(g => g.test(v)) || GROUPS[0]).id;
}

/** Whether `story` matches every word of `query` (case-insensitive). */
export function matchesQuery(story, query) {
  const hay = `${story.name} ${storyName(story.name)} ${story.id} kafka ${story.kafka_version} ${story.description} ${storyDescription(story.description)}`.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every(w => hay.includes(w));
}

export function libraryPane(app, lib, dlg) {
  const search = h("input.psearch", { type: "search", placeholder: t("search {n} stories: title, era, KIP, words…", { n: lib.length }),
    "aria-label": t("search the library"), oninput: () => fill() });
  const list = h("div.plist", { role: "list" });
  const detail = h("div.pdetail");
  const empty = h("div.dim.small", { text: t("No story matches: try fewer words.") });
  let selected = null;

  function select(s) {
    selected = s;
    for (const b of list.querySelectorAll(".pitem")) b.classList.toggle("active", b.dataset.id === s.id);
    clear(detail);
    detail.append(h("h3", { text: storyName(s.name) }),
      h("div.counts", null, h("span.chip.info", { text: `kafka ${s.kafka_version}` }), h("span.chip", { text: t("{n} brokers", { n: Array.isArray(s.brokers) ? s.brokers.length : s.brokers }) }),
        s.racks ? h("span.chip", { text: t("{n} zones", { n: s.racks }) }) : null,
        h("span.chip", { text: t("topics: {list}", { list: s.topics.join(", ") }) }), h("span.chip", { text: `${s.duration_ms / 1000} s` })),
      h("h3", { text: t("What to watch") }), h("p", { text: storyDescription(s.description) }),
      ...(s.walkthrough ? [h("p.dim.small", { text: t("This story has a walkthrough: its steps appear under “What to watch” while it runs.") })] : []),   // append(null) would write "null"
      h("button.primary#run-scenario", { type: "button", text: t("Run this scenario"), onclick: async () => {
        if (await app.load({ library: s.id })) dlg.close();
      } }));
  }

  function fill() {
    clear(list);
    const shown = lib.filter(s => matchesQuery(s, search.value));
    for (const g of GROUPS) {
      const members = shown.filter(s => groupOf(s) === g.id);
      if (!members.length) continue;
      list.append(h("div.pgroup", { text: `${g.title} · ${members.length}`, dataset: { group: g.id } }));
      for (const s of members) {
        list.append(h("button.pitem", { type: "button", role: "listitem", dataset: { id: s.id }, onclick: () => select(s) },
          h("div.pname", { text: storyName(s.name) }), h("div.pmeta", { text: `${s.id} · kafka ${s.kafka_version}` },
            s.walkthrough ? h("span.chip.pwalk", { text: t("walkthrough"), title: t("Told step by step, as the seed articles tell it") }) : null)));
      }
    }
    if (!shown.length) list.append(empty);
    if (shown.length && (!selected || !shown.includes(selected))) select(shown[0]);
    else if (selected) select(selected);
  }

  const current = app.store.clock && app.store.clock.source && app.store.clock.source.name;
  selected = lib.find(s => s.id === current) || null;
  fill();
  setTimeout(() => search.focus(), 0);
  return h("div.picker", null, h("div.pleft", null, search, list), detail);
}

/** While the picker is open the run behind it stands still (nothing happens unseen); closing the
 *  picker without loading another story lets a run that was playing go on. */
export function pauseWhileOpen(app, dlg) {
  const clock = app.store.clock;
  if (!clock || !clock.playing || clock.finished) return;
  // a story loaded from the picker starts a run of its own: the held one is not resumed then (the
  // new run's first frame may not have arrived when the picker closes, so count loads, not runs)
  const loadsAtOpen = app.loads || 0;
  app.control("pause");
  dlg.addEventListener("close", () => {
    const now = app.store.clock;
    if ((app.loads || 0) === loadsAtOpen && now && !now.playing && !now.finished) app.control("play");
  }, { once: true });
}
