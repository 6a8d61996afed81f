// Icons drawn as inline SVG, not as characters: a glyph such as ⏹ needs a
// font that has it, and a machine without one (headless Chromium on a
// server, some phones) shows an empty box.

const NS = 'http://www.w3.org/2000/svg';

// Each is the SVG's children, on a 16×16 grid, in currentColor.
const shapes = {
  stop: [['rect', { x: 3, y: 3, width: 10, height: 10, rx: 1.5 }]],
  // A prompt and a cursor: a call the model makes.
  tool: [['path', { d: 'M2.5 4 6.5 8 2.5 12', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.6, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' }], ['rect', { x: 8, y: 11.2, width: 6, height: 1.6, rx: 0.5 }]],
  // A paperclip: attach files.
  clip: [['path', { d: 'M10.8 4.6 5.9 9.5a1.3 1.3 0 0 0 1.8 1.8l5.1-5.1a2.7 2.7 0 0 0-3.8-3.8L3.8 7.6a4 4 0 0 0 5.7 5.7l3.9-3.9', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.4, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' }]],
  // A sheet with a folded corner: a file.
  file: [['path', { d: 'M4 1.8h5l3.2 3.2v9.2H4Z M9 1.8V5h3.2', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.4, 'stroke-linejoin': 'round' }]],
  warn: [['path', { d: 'M8 1.5 15 14.5H1Z', fill: 'none', stroke: 'currentColor', 'stroke-width': 1.6, 'stroke-linejoin': 'round' }], ['rect', { x: 7.2, y: 6, width: 1.6, height: 4.5 }], ['rect', { x: 7.2, y: 11.5, width: 1.6, height: 1.6 }]],
};

// icon returns a new SVG element drawing name, hidden from screen
// readers (the text beside it says what it means).
export function icon(name) {
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('class', `icon icon-${name}`);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('fill', 'currentColor');
  for (const [tag, attrs] of shapes[name]) {
    const el = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    svg.append(el);
  }
  return svg;
}
