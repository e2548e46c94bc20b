// How many faults a sweep drew, said on the page: a run whose seed drew no fault tested nothing,
// so a cell (or a sweep) of such runs shows "0 % lost" without having put Kafka to any test.
import { untested } from "./heatmap.js";
import { t } from "../i18n.js";

// fewer faults than this per run on average is "few": most runs then saw no fault at all
const FEW_PER_RUN = 1;

const CHANGE = t("To test Kafka, draw more faults: more seeds per cell, a longer fault phase, or a fault profile " +
  "with higher rates (the sweep document's \"faults\", e.g. {example} = 4 process crashes per simulated minute).",
  { example: '{"from": "default", "crash_process": [4, 2000, 30000]}' });

/** The banner's text for a sweep's report, or null when its faults are enough to read it. */
export function faultWarning(sweep, cells) {
  const ran = cells.filter((c) => c.runs_stored > 0);
  const runs = ran.reduce((n, c) => n + c.runs_stored, 0);
  if (!runs) return null;
  const faults = sweep.faults_drawn ?? 0;
  const blank = ran.filter(untested).length;
  let what;
  if (!faults) {
    what = t("This sweep drew no fault at all in its {runs} run(s): every cell is untested, not safe — " +
      "its {zero} says nothing about losing acknowledged records.", { runs, zero: "0 %" });     // a literal "% s" would read as a printf slot
  } else if (blank) {
    what = t("{blank} of {cells} cells drew no fault in their runs (hatched: untested, not safe); " +
      "the sweep drew {faults} fault(s) in {runs} run(s).", { blank, cells: ran.length, faults, runs });
  } else if (faults < FEW_PER_RUN * runs) {
    what = t("This sweep drew only {faults} fault(s) in {runs} run(s): most runs saw no fault, so a low loss " +
      "rate here is weak evidence.", { faults, runs });
  } else {
    return null;
  }
  return { what, change: CHANGE };
}

/** Show (or hide) the banner in `box`. */
export function showFaultWarning(box, warning) {
  box.hidden = !warning;
  box.replaceChildren();
  if (!warning) return;
  const head = document.createElement("b");
  head.textContent = t("Few faults drawn. ");
  box.append(head, warning.what, " ", warning.change);
}
