"""Layout checks by bounding boxes, for any page: no two visible sibling regions overlap, and
nothing is clipped horizontally (the page does not scroll sideways, no region reaches past the
viewport, no box that hides its overflow has content wider than itself).

Why boxes rather than pixels: a screenshot diff says *that* something moved, the boxes say
*which* two regions collide, which is what a layout fix needs."""

SIZES = [(1024, 768), (1366, 768), (1920, 1080)]

# Runs in the page: every argument is a CSS selector of a container whose visible, in-flow
# children must not overlap each other; plus every element matched by `clip` is checked for
# hidden horizontal overflow. Returns a list of human-readable problems.
_JS = r"""
([containers, clipSelectors, tolerance]) => {
  const problems = [];
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    const cls = [...el.classList].slice(0, 2);
    if (cls.length) s += '.' + cls.join('.');
    return s;
  };
  const visible = (el) => {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden' || el.hidden) return false;
    if (cs.position === 'absolute' || cs.position === 'fixed') return false;   // overlays by design
    const r = el.getBoundingClientRect();
    return r.width > 0.5 && r.height > 0.5;
  };
  const vw = document.documentElement.clientWidth;
  const doc = document.scrollingElement || document.documentElement;
  if (doc.scrollWidth > vw + tolerance) problems.push(`the page scrolls sideways: ${doc.scrollWidth} > ${vw}`);
  for (const sel of containers) {
    for (const box of document.querySelectorAll(sel)) {
      if (!visible(box)) continue;
      const kids = [...box.children].filter(visible);
      const rects = kids.map((k) => k.getBoundingClientRect());
      for (let i = 0; i < kids.length; i++) {
        const a = rects[i];
        if (a.right > vw + tolerance) problems.push(`${name(kids[i])} in ${sel} reaches past the viewport (${Math.round(a.right)} > ${vw})`);
        for (let j = i + 1; j < kids.length; j++) {
          const b = rects[j];
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > tolerance && h > tolerance)
            problems.push(`${name(kids[i])} and ${name(kids[j])} in ${sel} overlap by ${Math.round(w)}x${Math.round(h)} px`);
        }
      }
    }
  }
  for (const sel of clipSelectors) {
    for (const el of document.querySelectorAll(sel)) {
      if (!visible(el)) continue;
      const ox = getComputedStyle(el).overflowX;
      // scrolling boxes show their overflow on demand; hidden/clip boxes cut it off for good
      if ((ox === 'hidden' || ox === 'clip') && el.scrollWidth > el.clientWidth + tolerance)
        problems.push(`${name(el)} clips its content: ${el.scrollWidth} > ${el.clientWidth}`);
      const r = el.getBoundingClientRect();
      if (r.right > vw + tolerance || r.left < -tolerance)
        problems.push(`${name(el)} is cut by the viewport (${Math.round(r.left)}..${Math.round(r.right)} of ${vw})`);
      // text drawn in an SVG past its viewBox is cut off without any overflow to measure
      for (const svg of el.querySelectorAll('svg[viewBox]')) {
        const vb = svg.viewBox.baseVal;
        for (const t of svg.querySelectorAll('text')) {
          if (!t.textContent) continue;
          const b = t.getBBox();
          if (b.x < vb.x - tolerance || b.x + b.width > vb.x + vb.width + tolerance)
            problems.push(`text "${t.textContent.slice(0, 40)}" runs out of ${name(svg)} (${Math.round(b.x)}..${Math.round(b.x + b.width)} of ${vb.width})`);
        }
      }
    }
  }
  return problems;
}
"""


# The empty band under a scrolling column's content: from the bottom of its last `last` element
# to the bottom of the column's content box (0 when the content is taller and scrolls).
_BAND_JS = r"""
([column, last]) => {
  const col = document.querySelector(column);
  const items = [...document.querySelectorAll(last)].filter((el) => el.getBoundingClientRect().height > 0);
  if (!col || !items.length) return null;
  if (col.scrollHeight > col.clientHeight + 1) return 0;
  const r = col.getBoundingClientRect();
  const bottom = r.top + col.clientTop + col.clientHeight - parseFloat(getComputedStyle(col).paddingBottom);
  return Math.round(bottom - items[items.length - 1].getBoundingClientRect().bottom);
}
"""


# Boxes placed by hand (absolutely positioned, e.g. the nodes of the cluster map) escape the sibling
# and clip checks above: every pair of visible elements matched by `selector` is compared instead,
# and each one that hides its overflow must not have content wider than itself.
_PLACED_JS = r"""
([selector, tolerance]) => {
  const els = [...document.querySelectorAll(selector)].filter((el) => {
    const cs = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    return !el.hidden && cs.display !== 'none' && cs.visibility !== 'hidden' && r.width > 0.5 && r.height > 0.5;
  });
  const label = (el) => el.className.split(' ').slice(0, 3).join('.') + (el.dataset.broker ? ' ' + el.dataset.broker : '')
    + (el.dataset.voter ? ' ' + el.dataset.voter : '') + (el.textContent ? ' "' + el.textContent.slice(0, 24) + '"' : '');
  const out = [];
  for (const el of els) {         // a placed box that hides its overflow must not need to
    const ox = getComputedStyle(el).overflowX;
    if ((ox === 'hidden' || ox === 'clip') && el.scrollWidth > el.clientWidth + tolerance)
      out.push(`${label(el)} clips its content: ${el.scrollWidth} > ${el.clientWidth}`);
  }
  const rects = els.map((el) => el.getBoundingClientRect());
  for (let i = 0; i < els.length; i++) {
    for (let j = i + 1; j < els.length; j++) {
      const a = rects[i], b = rects[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > tolerance && h > tolerance) out.push(`${label(els[i])} and ${label(els[j])} overlap by ${Math.round(w)}x${Math.round(h)} px`);
    }
  }
  return out;
}
"""


def placed_overlaps(page, selector, tolerance=1):
    """Overlapping pairs among the visible elements matched by `selector` (hand-placed boxes), and
    those of them that clip their content."""
    return page.evaluate(_PLACED_JS, [selector, tolerance])


def empty_band(page, column, last):
    """Pixels of empty band under the last `last` element of the column `column` (None if absent)."""
    return page.evaluate(_BAND_JS, [column, last])


def layout_problems(page, containers, clip=(), tolerance=1):
    """Problems found on the page as drawn now (an empty list when the layout is sound)."""
    return page.evaluate(_JS, [list(containers), list(clip), tolerance])


def check_sizes(page, url, containers, clip=(), ready=None, shots=None, name="page", frames=None, band=None, placed=()):
    """Open `url` at each of SIZES, wait for `ready` (a callable of the page), save a screenshot
    under `shots` and return {size: problems} for the sizes with problems. `frames`, a pair
    (containers, clip), checks every child frame too (the compare page's panes). `band`, a
    triple (column, last element, most pixels), refuses an empty band under a column's content.
    `placed`: selectors of hand-placed boxes none of which may overlap another (placed_overlaps)."""
    found = {}
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.goto(url)
        if ready:
            ready(page)
        page.wait_for_timeout(250)          # let resize observers and grid reflow settle
        if shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"{name}-{w}x{h}.png"))
        problems = layout_problems(page, containers, clip)
        if band:
            gap = empty_band(page, band[0], band[1])
            if gap is None:
                problems.append(f"no {band[1]} in {band[0]} to measure the empty band under")
            elif gap > band[2]:
                problems.append(f"an empty band of {gap} px under the last {band[1]} in {band[0]} (at most {band[2]})")
        for sel in placed:
            problems += placed_overlaps(page, sel)
        for frame in page.frames[1:] if frames else ():
            problems += [f"in {frame.url.split('?')[0]}: {p}" for p in layout_problems(frame, *frames)]
        if problems:
            found[f"{w}x{h}"] = problems
    return found
