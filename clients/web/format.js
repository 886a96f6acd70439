/*
 * format.js -- DOM and SVG helpers, number formatting, ticks and the colour
 * map of the gapsim page (no state, no requests).
 */
export const SVGNS = 'http://www.w3.org/2000/svg';
export const $ = (id) => document.getElementById(id);

export function svgEl(tag, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
export function htmlEl(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
/* value property and attribute (the attribute is what a DOM dump shows) */
export function setInput(e, v) {
  e.value = String(v);
  e.setAttribute('value', String(v));
}
/* Size an SVG: W x H pixels, user units 1:1. */
export function sizeSvg(svg, W, H) {
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('width', W);
  svg.setAttribute('height', H);
}
export function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
}

/* A number for people: 3 significant digits, no exponent for usual sizes. */
export function fmt(v, digits) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const d = digits === undefined ? 3 : digits;
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (Number.isInteger(v) && a < 1e6) return String(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(d - 1);
  const dec = Math.max(0, d - 1 - Math.floor(Math.log10(a)));
  return v.toFixed(dec);
}
export function pct(v) {
  return Number.isFinite(v) ? (100 * v).toFixed(1) + ' %' : '–';
}

/* Ticks at 1, 2, 5 x 10^k covering [lo, hi], about n of them. */
export function niceTicks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, n);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / p;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    out.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return out;
}
export function tickLabel(t, ticks) {
  const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : Math.abs(t) || 1;
  const dec = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return t.toFixed(Math.min(dec, 6));
}
/* 1-2-5 ticks of a log axis over [lo, hi] (lo > 0). */
export function logTicks(lo, hi) {
  const out = [];
  for (let d = Math.pow(10, Math.floor(Math.log10(lo))); d <= hi; d *= 10)
    for (const f of [1, 2, 5]) if (f * d >= lo && f * d <= hi) out.push(f * d);
  return out.length < 2 ? [lo, hi] : out;
}
/* A "nice" upper end of a color scale: 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k. */
export function niceCeil(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const f of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (f * p >= v * (1 - 1e-12)) return f * p;
  return 10 * p;
}
/* Largest finite value of an array (0 for none). */
export function maxOf(v) {
  let mx = 0;
  if (v) for (let k = 0; k < v.length; k++) if (v[k] > mx) mx = v[k];
  return mx;
}

// Matplotlib's viridis sampled at 0, 0.1, ..., 1; linear in between.
const VIRIDIS = [
  [68, 1, 84], [72, 36, 117], [65, 68, 135], [53, 95, 141], [42, 120, 142], [33, 145, 140],
  [34, 168, 132], [68, 191, 112], [122, 209, 81], [189, 223, 38], [253, 231, 37],
];
/* A neutral grey ramp (light to dark): values that are not an answer's. */
export function greys(t) {
  if (!Number.isFinite(t)) return '#bbbbbb';
  const c = Math.round(225 - 160 * Math.min(1, Math.max(0, t))).toString(16).padStart(2, '0');
  return '#' + c + c + c;
}
export function viridis(t) {
  if (!Number.isFinite(t)) return '#bbbbbb';
  t = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(t));
  const f = t - i;
  const a = VIRIDIS[i], b = VIRIDIS[i + 1];
  const c = (k) => Math.round(a[k] + (b[k] - a[k]) * f).toString(16).padStart(2, '0');
  return '#' + c(0) + c(1) + c(2);
}
