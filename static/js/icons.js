// A few inline SVG icons (fonts do not all have the media-control glyphs).
const PATHS = {
  play: "M7 4.5v15l12-7.5z",
  pause: "M6.5 4.5h4v15h-4zM13.5 4.5h4v15h-4z",
  step: "M5 4.5v15l10-7.5zM16 4.5h3v15h-3z",
  restart: "M12 5a7 7 0 1 1-6.6 4.7l1.9.7A5 5 0 1 0 12 7v3L7.5 6 12 2z",
  replay: "M4 5h2v5.2A7 7 0 1 1 5.1 15l1.9-.6A5 5 0 1 0 7.3 9H11v2H4z",
};

export function icon(name) {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "15");
  svg.setAttribute("height", "15");
  svg.setAttribute("aria-hidden", "true");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", PATHS[name] || "");
  path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  svg.dataset.icon = name;
  return svg;
}
