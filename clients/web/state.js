/*
 * state.js -- what the page shows (one object, S) and its URL form.
 *
 * The URL holds the view, so a view can be shared or opened directly:
 * ?assembly=ID&job=ID&gap=I&mode=M&threshold=MM&bins=B&scale=auto&filter=TEXT
 * (job=ID alone opens the cloud with its own assembly)
 * (and the test hooks submit_demo=N&seed=S&fraction=F&label=L, submit_again=1,
 * click=i,j, steps=ID,filter:TEXT,...).
 */
export const MODES = ['initial', 'residual', 'force', 'p95', 'exceed'];
/* Views of one gap vector (the gap controls apply); the others are per cloud. */
export const GAP_MODES = ['initial', 'residual', 'force'];

export const params = new URLSearchParams(window.location.search);

export function intParam(k, def) {
  const v = parseInt(params.get(k), 10);
  return Number.isFinite(v) && v >= 0 ? v : def;
}
/* The summary's histogram bins: the API takes 1..1000 (422 otherwise). */
export const BINS_MIN = 1, BINS_MAX = 1000;
export function clampBins(v) {
  return Math.min(BINS_MAX, Math.max(BINS_MIN, v));
}
function numParam(k, def) {
  const v = parseFloat(params.get(k));
  return Number.isFinite(v) && v >= 0 ? v : def;
}

export const S = {
  assemblies: [],
  asm: null, // assembly row
  geo: null, // geometry
  jobs: [],
  job: null, // job row
  gap: intParam('gap', 0),
  mode: MODES.includes(params.get('mode')) ? params.get('mode') : 'residual',
  scaleAuto: params.get('scale') === 'auto', // false: initial and residual share one colour scale
  filter: params.get('filter') || '',
  threshold: numParam('threshold', 0.1),
  bins: clampBins(intParam('bins', 20)),
  binsAsked: params.has('bins') ? params.get('bins') : null, // the URL's value, when clamped: said next to the field
  result: null, // result of the selected gap (w, lambda)
  g0: null, // initial gaps of the selected gap
  summary: null,
  summarySeq: 0, // loadSummary's request number: an answer to an older one is dropped
  summaryAt: 0, // when the selected cloud's summary was last asked (ms): a running cloud's every 2 s
  nodes: [], // circle elements, one per pair
  fast: [], // fastener candidate rings
  fastHalo: [],
  pollTimer: null,
  pollGen: 0, // pollJob's generation: an answer to an older one is dropped
  polling: false, // a job is being followed (pollJob)
  follow: null, // {id, select}: the job the progress bar follows; select: show it when it ends (a cloud just submitted)
  listTimer: null,
  resultSeq: 0,
  edit: null, // Uint8Array: the pattern picked by clicking candidates, or null
};

export function updateURL() {
  const q = new URLSearchParams();
  if (S.asm) q.set('assembly', S.asm.id);
  if (S.job) {
    q.set('job', S.job.id);
    q.set('gap', String(S.gap));
  }
  q.set('mode', S.mode);
  if (S.scaleAuto) q.set('scale', 'auto');
  if (S.filter) q.set('filter', S.filter);
  if (S.threshold !== 0.1) q.set('threshold', String(S.threshold));
  if (S.bins !== 20) q.set('bins', String(S.bins));
  window.history.replaceState(null, '', window.location.pathname + '?' + q.toString());
}
