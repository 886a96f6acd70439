/*
 * api.js -- the page's requests to the daemon that served it (same origin).
 *
 * A daemon started with --token-file answers 401 without a bearer token: the
 * page asks for one once, keeps it in this browser (localStorage
 * "gapsim.token") and sends it on every request. Errors are thrown as Error
 * with "METHOD path: status message" (the server's JSON error message).
 */
const TOKEN_KEY = 'gapsim.token';

function withToken(opts) {
  const t = window.localStorage ? localStorage.getItem(TOKEN_KEY) : null;
  if (!t) return opts;
  const o = Object.assign({}, opts || {});
  o.headers = Object.assign({}, (opts && opts.headers) || {}, { Authorization: 'Bearer ' + t });
  return o;
}

export async function api(path, opts) {
  let r = await fetch(path, withToken(opts));
  if (r.status === 401 && window.localStorage) {
    const t = window.prompt('This gapsimd needs an access token (gapsimd --token-file):');
    if (t) {
      localStorage.setItem(TOKEN_KEY, t.trim());
      r = await fetch(path, withToken(opts));
    }
  }
  const txt = await r.text();
  let body = null;
  try {
    body = txt ? JSON.parse(txt) : null;
  } catch (e) {
    body = null;
  }
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : txt.slice(0, 200);
    throw new Error(`${opts && opts.method ? opts.method : 'GET'} ${path}: ${r.status} ${msg}`);
  }
  return body;
}

/* POST a JSON body. */
export function postJSON(path, obj) {
  return api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(obj) });
}
