// A library story's title and guide in the page's language (issue 33). The engine's words stay
// English in the scenario (a saved run keeps them, golden digests pin them); the page shows the
// catalog's translation, found by the English itself (app/i18n/library_extract.py puts every
// story's name and description in the catalog). A story rerun under another era carries the
// markers of app/runner/story_text.py: they are translated here piece by piece, so the story's
// own words are still found.
import { t, N_, known } from "./i18n.js";

// app/runner/story_text.py's markers (tests/i18n/test_story_text.py keeps the two in step)
const RERUN = / — rerun under (\S+)$/;
const WRITTEN_FOR = /^\[Written for Kafka ([^\]\s]+); rerun under ([^\]]+?), whose rules may tell another story\] /;
const KRAFT_NOTE = N_("KRaft has no ZooKeeper: where the text below speaks of sessions, /brokers/ids or watches, the active controller fences a broker whose heartbeats stop for broker.session.timeout.ms and moves its leaderships with PartitionChangeRecords.");

/** A story's title: the catalog's, with " — rerun under <era>" in the page's words. */
export function storyName(name) {
  if (typeof name !== "string" || !name) return name;
  const m = name.match(RERUN);
  if (!m) return known(name);
  return t("{name} — rerun under {era}", { name: known(name.slice(0, m.index)), era: m[1] });
}

/** A story's guide ("What to watch"): the catalog's, with the rerun marker and the KRaft note. */
export function storyDescription(text) {
  if (typeof text !== "string" || !text) return text;
  const m = text.match(WRITTEN_FOR);
  if (!m) return known(text);
  let rest = text.slice(m[0].length);
  let note = "";
  if (rest.startsWith(KRAFT_NOTE + " ")) {
    note = known(KRAFT_NOTE) + " ";
    rest = rest.slice(KRAFT_NOTE.length + 1);
  }
  return t("[Written for Kafka {era}; rerun under {version}, whose rules may tell another story]", { era: m[1], version: m[2] })
    + " " + note + known(rest);
}
