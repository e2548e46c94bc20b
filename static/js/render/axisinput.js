// The pointer on a partition's strips: hover explains an offset, the wheel zooms the partition's
// offset axis, a drag pans it, a double-click shows every offset again and follows the tail.
// Handlers change the axis state only; the next render derives the window from it.
import { zoomAxis, panAxis, offsetAtX } from "./logaxis.js";
import { emptyHighlight } from "../store.js";

/** `opts`: pitch (px per replica row), axis(key) -> state, tooltip element, redraw(),
 *  describe(key, broker, x, width) -> text or null. The card holds __p, __range, __win, __order. */
export function wireAxis(app, card, canvas, opts) {
  const { pitch, axis, tooltip, redraw, describe } = opts;
  let drag = null;

  canvas.addEventListener("mousemove", e => {
    if (drag) {
      const win = card.__win, w = canvas.clientWidth;
      const moved = (drag.x - e.clientX) * win.span / w;
      if (Math.abs(drag.x - e.clientX) > 2) drag.moved = true;
      panAxis(axis(card.dataset.key), card.__range, drag.win, moved);
      tooltip.hidden = true;
      redraw();
      return;
    }
    const broker = (card.__order || [])[Math.floor(e.offsetY / pitch)];
    const text = broker === undefined ? null : describe(card.dataset.key, broker, e.offsetX, canvas.clientWidth);
    if (!text) { tooltip.hidden = true; return; }
    tooltip.textContent = text;
    tooltip.hidden = false;
    tooltip.style.left = Math.min(window.innerWidth - 300, e.clientX + 14) + "px";
    tooltip.style.top = (e.clientY + 14) + "px";
  });
  canvas.addEventListener("mouseleave", () => { tooltip.hidden = true; drag = null; });
  canvas.addEventListener("mousedown", e => {
    if (e.button !== 0 || !card.__win) return;
    const state = axis(card.dataset.key);
    if (state.span === null) return;            // everything shows already: nothing to pan
    drag = { x: e.clientX, win: card.__win, moved: false };
    e.preventDefault();
  });
  window.addEventListener("mouseup", () => { drag = null; });
  canvas.addEventListener("wheel", e => {
    if (!card.__win || !card.__range) return;
    e.preventDefault();                          // the page must not scroll while the axis zooms
    const at = offsetAtX(e.offsetX, card.__win, canvas.clientWidth);
    zoomAxis(axis(card.dataset.key), card.__range, card.__win, e.deltaY > 0 ? 1.25 : 0.8, at);
    redraw();
  }, { passive: false });
  canvas.addEventListener("dblclick", () => {
    const state = axis(card.dataset.key);
    Object.assign(state, { span: null, follow: true, mark: null });
    redraw();
  });
}

/** The ledger (render/ledger.js) lists records by id: clicking one that has an offset shows it
 *  on its partition's axis (`focusRecord(key, offset, id)`), the way to find a lost record. */
export function wireLedger(app, focusRecord) {
  // delegated: the ledger's table is built after the partitions (and may be rebuilt)
  document.addEventListener("click", e => {
    const tr = e.target instanceof Element ? e.target.closest("#ledger tbody tr") : null;
    if (!tr || !tr.dataset.partition || tr.dataset.offset === "") return;
    const id = tr.dataset.record, key = tr.dataset.partition;
    const hl = emptyHighlight();
    hl.active = true;
    hl.partitions.add(key);
    hl.records.add(id);
    app.store.ui.highlight = hl;
    focusRecord(key, Number(tr.dataset.offset), id);
  });
}
