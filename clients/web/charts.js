/*
 * charts.js -- the page's SVG charts: histograms (linear or log count, linear
 * or log x) and the initial-vs-residual gap scatter of one gap vector.
 */
import { svgEl, sizeSvg, clear, fmt, niceTicks, tickLabel, logTicks, niceCeil } from './format.js';

/* edges (n + 1) and counts (n) as bars: rect.hist-bar[data-count]. o: unit,
 * title, log (count axis), logx (x axis), threshold (a dashed line, mm). */
export function drawHist(svg, edges, counts, o) {
  clear(svg);
  const W = 460, H = 210, M = { l: 58, r: 12, t: 12, b: 44 };
  sizeSvg(svg, W, H);
  const pw = W - M.l - M.r, ph = H - M.t - M.b;
  const n = counts.length;
  if (!n) return;
  let lo = edges[0], hi = edges[n];
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const logx = o.logx && lo > 0 && hi > lo;
  const X = logx ? (v) => M.l + (Math.log(v / lo) / Math.log(hi / lo)) * pw : (v) => M.l + ((v - lo) / (hi - lo)) * pw;
  const cmax = Math.max(1, ...counts);
  const f = o.log ? (c) => (c > 0 ? Math.log10(c) + 1 : 0) : (c) => c;
  const fmax = o.log ? Math.log10(cmax) + 1 : cmax;
  const Y = (c) => M.t + ph - (f(c) / fmax) * ph;
  const axes = svgEl('g', { class: 'axes' }, svg);
  let yt;
  if (o.log) {
    yt = [];
    for (let p = 1; p <= cmax; p *= 10) yt.push(p);
  } else yt = niceTicks(0, cmax, 4).filter((t) => Number.isInteger(t));
  for (const t of yt) {
    svgEl('line', { x1: M.l, x2: M.l + pw, y1: Y(t), y2: Y(t), class: 'grid' }, axes);
    svgEl('text', { x: M.l - 6, y: Y(t) + 4, class: 'tick-label', 'text-anchor': 'end' }, axes,
      t >= 1e4 ? t.toExponential(0).replace('e+', 'e') : String(t));
  }
  svgEl('text', { x: 12, y: M.t + ph / 2, class: 'axis-title', 'text-anchor': 'middle',
    transform: `rotate(-90 12 ${M.t + ph / 2})` }, axes, o.log ? 'count (log)' : 'count');
  const bars = svgEl('g', { class: 'bars' }, svg);
  const spread = hi > lo && edges[n] > edges[0];
  for (let i = 0; i < n; i++) {
    const a = edges[i], b = edges[i + 1];
    const xa = spread ? X(a) : M.l + (i / n) * pw;
    const xb = spread ? X(b) : M.l + ((i + 1) / n) * pw;
    const y = Y(counts[i]);
    const rect = svgEl('rect', { class: 'hist-bar', x: xa + 0.5, y, width: Math.max(0.5, xb - xa - 1),
      height: M.t + ph - y, 'data-count': counts[i], 'data-lo': a, 'data-hi': b }, bars);
    svgEl('title', {}, rect, `${fmt(a)}–${fmt(b)}${o.unit ? ' ' + o.unit : ''}: ${counts[i]}`);
  }
  svgEl('line', { x1: M.l, x2: M.l + pw, y1: M.t + ph, y2: M.t + ph, class: 'axis' }, axes);
  const xt = logx ? logTicks(lo, hi) : niceTicks(lo, hi, 5);
  for (const t of xt) {
    svgEl('line', { x1: X(t), x2: X(t), y1: M.t + ph, y2: M.t + ph + 5, class: 'tick' }, axes);
    svgEl('text', { x: X(t), y: M.t + ph + 18, class: 'tick-label', 'text-anchor': 'middle' }, axes, tickLabel(t, xt));
  }
  svgEl('text', { x: M.l + pw / 2, y: M.t + ph + 38, class: 'axis-title', 'text-anchor': 'middle' }, axes, o.title);
  if (o.threshold !== undefined && o.threshold >= lo && o.threshold <= hi) {
    const xx = X(o.threshold);
    svgEl('line', { x1: xx, x2: xx, y1: M.t, y2: M.t + ph, class: 'threshold' }, svg);
    svgEl('text', { x: xx + 4, y: M.t + 10, class: 'threshold-label' }, svg, `threshold ${fmt(o.threshold)} mm`);
  }
}

/* Residual gap w against initial gap g, one dot per pair (circle.sc-pt
 * [data-k][data-g][data-w]), both axes in mm on one scale, the line w = g.
 * Classes: .contact (a contact force lam > 0: closed, w = 0 to the solver's
 * accuracy, not always to the bit; without lam: w === 0), .opened (w > g +
 * threshold: the pair opened, prying), else .open. Returns the counts of
 * each class. */
export function drawScatter(svg, g, w, lam, threshold) {
  clear(svg);
  const W = 420, H = 360, M = { l: 58, r: 14, t: 14, b: 46 };
  sizeSvg(svg, W, H);
  const counts = { contact: 0, open: 0, opened: 0 };
  if (!g || !w || g.length !== w.length) return null;
  let mx = 0;
  for (let k = 0; k < g.length; k++) mx = Math.max(mx, g[k], w[k]);
  const top = niceCeil(mx);
  const pw = W - M.l - M.r, ph = H - M.t - M.b, side = Math.min(pw, ph);
  const X = (v) => M.l + (v / top) * side, Y = (v) => M.t + side - (v / top) * side;
  const axes = svgEl('g', { class: 'axes' }, svg);
  svgEl('rect', { x: M.l, y: M.t, width: side, height: side, class: 'plot-bg' }, axes);
  const t = niceTicks(0, top, 5);
  for (const v of t) {
    svgEl('line', { x1: X(v), x2: X(v), y1: M.t, y2: M.t + side, class: 'grid' }, axes);
    svgEl('line', { x1: M.l, x2: M.l + side, y1: Y(v), y2: Y(v), class: 'grid' }, axes);
    svgEl('text', { x: X(v), y: M.t + side + 18, class: 'tick-label', 'text-anchor': 'middle' }, axes, tickLabel(v, t));
    svgEl('text', { x: M.l - 6, y: Y(v) + 4, class: 'tick-label', 'text-anchor': 'end' }, axes, tickLabel(v, t));
  }
  svgEl('text', { x: M.l + side / 2, y: M.t + side + 38, class: 'axis-title', 'text-anchor': 'middle' }, axes, 'initial gap g (mm)');
  svgEl('text', { x: 14, y: M.t + side / 2, class: 'axis-title', 'text-anchor': 'middle',
    transform: `rotate(-90 14 ${M.t + side / 2})` }, axes, 'residual gap w (mm)');
  svgEl('line', { x1: X(0), y1: Y(0), x2: X(top), y2: Y(top), class: 'diagonal' }, axes);
  svgEl('text', { x: X(top) - 4, y: Y(top) + 14, class: 'tick-label', 'text-anchor': 'end' }, axes, 'w = g');
  const pts = svgEl('g', { class: 'points' }, svg);
  const frag = document.createDocumentFragment();
  for (let k = 0; k < g.length; k++) {
    const closed = lam ? lam[k] > 0 : w[k] === 0;
    const cls = closed ? 'contact' : w[k] > g[k] + threshold ? 'opened' : 'open';
    counts[cls]++;
    const c = svgEl('circle', { class: 'sc-pt ' + cls, cx: X(g[k]).toFixed(2), cy: Y(w[k]).toFixed(2), r: 2.2,
      'data-k': k, 'data-g': g[k], 'data-w': w[k] });
    frag.appendChild(c);
  }
  pts.appendChild(frag);
  return counts;
}
