// The cocode dashboard (docs/dashboard.md). Plain script, no build step, nothing from another
// origin. Everything shown is text: issue titles, agent output, file names and log lines are
// written with textContent (never as markup), with control characters made visible.
'use strict';
(function () {
  const base = location.pathname.replace(/[^/]*$/, ''); // "/" for `ui`, "/ui/" under `serve`
  const tokenKey = 'cocode-ui-token:' + base;
  // The token comes after '#' (never sent, never a referrer) and is forgotten from the URL.
  const given = /^#token=([0-9A-Za-z._~-]{8,256})$/.exec(location.hash);
  if (given) {
    sessionStorage.setItem(tokenKey, given[1]);
    history.replaceState(null, '', location.pathname + location.search + '#/');
  }
  const token = () => sessionStorage.getItem(tokenKey) || '';
  // A tab opened from another (a run's page in a new tab) asks the open ones for the token:
  // it stays in this browser's memory while a tab of the dashboard is open, never on disk.
  const tokenShape = /^[0-9A-Za-z._~-]{8,256}$/;
  const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel(tokenKey) : null;

  // ---- text and elements -------------------------------------------------------------
  // Control characters written as the terminal commands write them (core/terminal_text):
  // ESC as \e, CR as \r, the others as \xNN; bidirectional overrides named. A title carrying
  // terminal escapes shows them, and no text reorders what surrounds it.
  function visible(text) {
    return String(text)
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) =>
        c === '\u001b' ? '\\e' : c === '\r' ? '\\r' : '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0'))
      .replace(/[\u202a-\u202e\u2066-\u2069]/g, (c) => '<U+' + c.charCodeAt(0).toString(16).toUpperCase() + '>');
  }
  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    setProps(e, props);
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : visible(kid));
    }
    return e;
  }
  const SVG = 'http://www.w3.org/2000/svg';
  function s(tag, props, ...kids) {
    const e = document.createElementNS(SVG, tag);
    setProps(e, props);
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : visible(kid));
    }
    return e;
  }
  function setProps(e, props) {
    if (!props) return;
    for (const [k, v] of Object.entries(props)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.setAttribute('class', v);
      else if (k === 'text') e.textContent = visible(v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  // A table: its caption, its column heads (a head may be [text, class]), and for each item the
  // cells of its row.
  function table(props, caption, heads, items, cells) {
    const head = (t) => (Array.isArray(t) ? h('th', { scope: 'col', class: t[1] }, t[0]) : h('th', { scope: 'col' }, t));
    return h('table', props, h('caption', null, caption), h('thead', null, h('tr', null, heads.map(head))), h('tbody', null, items.map((item) => h('tr', null, cells(item)))));
  }
  // Only web addresses become links.
  const safeUrl = (u) => (typeof u === 'string' && /^https?:\/\/[^\s"'<>\\]+$/.test(u) ? u : null);

  // ---- figures -------------------------------------------------------------------------
  function duration(seconds) {
    if (seconds === null || seconds === undefined || !isFinite(seconds)) return '–';
    seconds = Math.max(0, Math.round(seconds));
    const hh = Math.floor(seconds / 3600), mm = Math.floor((seconds % 3600) / 60), ss = seconds % 60;
    if (hh) return hh + 'h' + String(mm).padStart(2, '0') + 'm';
    if (mm) return mm + 'm' + String(ss).padStart(2, '0') + 's';
    return ss + 's';
  }
  function count(n) {
    if (!n) return '0';
    if (n < 1000) return String(n);
    if (n < 1e6) return (n / 1e3).toFixed(n < 1e4 ? 1 : 0) + 'k';
    return (n / 1e6).toFixed(1) + 'M';
  }
  // An axis's end: the maximum rounded up so that its four steps read as whole figures in the
  // axis's unit (seconds: 1, 2, 5, 10, 15, 30 s, 1, 2, 5, 10, 15, 30 min, 1, 2, 6, 12 h, days;
  // the rest 1, 2, 2.5, 5 × a power of ten). Before, 1.6 s read "0s 0s 1s 1s 2s".
  function niceMax(max, seconds) {
    if (!(max > 0)) return 1;
    const steps = seconds
      ? [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400]
      : null;
    if (steps) {
      for (const step of steps) if (step * 4 >= max) return step * 4;
      return Math.ceil(max / 4 / 86400) * 86400 * 4;
    }
    const raw = max / 4, power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw - 1e-12) return m * power * 4;
    return raw * 4;
  }
  // A run's start as a person reads it: "Nov 28 06:11:26", in this browser's time zone.
  function startedAt(row) {
    const t = Date.parse(row.start_time || '');
    if (!isFinite(t)) return '–';
    const d = new Date(t);
    return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  }
  // The start of a run id that names it to `logs` and `status` (its date and second).
  const shortId = (id) => String(id).slice(0, 15);
  const money = (x) => (x === null || x === undefined ? '–' : '$' + (x < 0.01 && x > 0 ? x.toFixed(4) : x.toFixed(2)));
  const percent = (x) => (x === null || x === undefined ? '–' : Math.round(x * 100) + '%');
  function bytes(n) {
    if (n < 1024) return n + ' B';
    if (n < 1 << 20) return (n / 1024).toFixed(0) + ' KiB';
    if (n < 1 << 30) return (n / (1 << 20)).toFixed(1) + ' MiB';
    return (n / (1 << 30)).toFixed(2) + ' GiB';
  }
  const timeOf = (stamp) => (stamp ? Date.parse(stamp) : NaN);
  function elapsedOf(row) {
    const start = timeOf(row.start_time);
    if (isNaN(start)) return '–';
    const end = timeOf(row.end_time);
    return duration(((isNaN(end) ? Date.now() : end) - start) / 1000);
  }
  function age(stamp) {
    const t = timeOf(stamp);
    return isNaN(t) ? '–' : duration((Date.now() - t) / 1000) + ' ago';
  }

  // ---- the server ----------------------------------------------------------------------
  class AuthError extends Error {}
  async function api(path, options = {}) {
    const headers = { Authorization: 'Bearer ' + token() };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + 'api/' + path, {
      method: options.method || 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      credentials: 'omit',
    });
    if (res.status === 401) throw new AuthError('the token is missing or wrong');
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error || 'HTTP ' + res.status);
    return body;
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // Server-sent events read with fetch, so that the token goes in a header (EventSource
  // cannot send one). `onEvent` returning false ends the stream for good.
  function follow(path, onEvent, onState) {
    const abort = new AbortController();
    let last = null, stopped = false, delay = 500;
    (async () => {
      while (!stopped) {
        try {
          const headers = { Authorization: 'Bearer ' + token(), Accept: 'text/event-stream' };
          if (last !== null) headers['Last-Event-ID'] = last;
          const res = await fetch(base + 'api/' + path, { headers, signal: abort.signal, cache: 'no-store', credentials: 'omit' });
          if (res.status === 401) throw new AuthError('401');
          if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
          if (onState) onState(true);
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let cut;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              let event = 'message', id = null;
              const data = [];
              for (const line of block.split('\n')) {
                if (line === '' || line.startsWith(':')) continue;
                const colon = line.indexOf(':');
                const field = colon < 0 ? line : line.slice(0, colon);
                let text = colon < 0 ? '' : line.slice(colon + 1);
                if (text.startsWith(' ')) text = text.slice(1);
                if (field === 'event') event = text;
                else if (field === 'data') data.push(text);
                else if (field === 'id') id = text;
              }
              if (id !== null) last = id;
              if (!data.length) continue;
              delay = 500;
              if (onEvent(event, data.join('\n')) === false) {
                stopped = true;
                abort.abort();
                return;
              }
            }
          }
        } catch (e) {
          if (stopped) return;
          if (e instanceof AuthError) {
            showAuth();
            return;
          }
        }
        if (stopped) return;
        if (onState) onState(false);
        await sleep(delay);
        delay = Math.min(delay * 2, 8000);
      }
    })();
    return () => {
      stopped = true;
      abort.abort();
    };
  }

  // ---- what is known -------------------------------------------------------------------
  const runs = new Map(); // run id → its row, as `status --json` has it
  let readOnly = true;
  let loaded = false;
  let eventsStop = null;
  const listeners = new Set(); // views that redraw on a row's change

  async function loadRuns() {
    const snap = await api('runs');
    runs.clear();
    for (const row of snap.runs) runs.set(row.run_id, row);
    readOnly = !!snap.read_only;
    document.getElementById('project').textContent = visible(snap.project || '');
    loaded = true;
    if (eventsStop) eventsStop();
    eventsStop = follow(
      'events?since=' + snap.version,
      (event, data) => {
        if (event === 'reset') {
          loadRuns().then(route, fail);
          return false;
        }
        if (event === 'run') {
          const row = JSON.parse(data);
          runs.set(row.run_id, row);
          for (const f of listeners) f(row);
        } else if (event === 'gone') {
          const gone = JSON.parse(data);
          const row = runs.get(gone.run_id);
          runs.delete(gone.run_id);
          if (row) for (const f of listeners) f(row);
        }
        return true;
      },
      (on) => {
        const live = document.getElementById('live');
        live.textContent = on ? (readOnly ? 'live · read-only' : 'live') : 'reconnecting';
        live.classList.toggle('on', on);
      },
    );
  }

  // Its agent going, or its check (`checking`: the step under way, which Stop ends too).
  const isActive = (row) => row.status === 'running' || row.status === 'queued' || !!row.checking;
  function stateOf(row) {
    if (row.checking) return { text: 'checking', cls: 's-running' };
    if (row.status === 'running' && row.ready_commit) return { text: 'READY', cls: 's-ready' };
    return { text: row.status, cls: 's-' + (['running', 'queued', 'completed', 'failed'].includes(row.status) ? row.status : 'unknown') };
  }
  function verdictOf(row) {
    if (!row.verdict) return null;
    return row.plan_round && row.verdict === 'PASS' ? 'PLAN' : row.verdict;
  }
  const agentName = (row) => row.agent + (row.round > 1 ? ' r' + row.round : '') + (row.plan_round ? ' (plan)' : '');
  const tokensOf = (row) => (row.tokens ? (row.tokens.input || 0) + (row.tokens.output || 0) : 0);
  function pullLink(row) {
    const links = row.links || {};
    const pr = safeUrl(links.pull_request);
    if (pr) return h('a', { href: pr, rel: 'noopener noreferrer', target: '_blank' }, 'PR #' + (pr.match(/\/pull\/(\d+)/) || [0, '?'])[1]);
    const comment = safeUrl(links.comment);
    if (comment) return h('a', { href: comment, rel: 'noopener noreferrer', target: '_blank' }, 'verdict');
    return h('span', { class: 'muted' }, '–');
  }

  // ---- messages ------------------------------------------------------------------------
  const main = () => document.getElementById('main');
  function clear(node) {
    while (node.firstChild) node.firstChild.remove();
  }
  function showAuth() {
    const m = main();
    clear(m);
    m.append(
      h('h1', null, 'The dashboard needs its token'),
      h('p', { class: 'msg err', role: 'alert' }, 'Open the address ', h('code', null, 'cocode-dispatch ui'), ' printed: it ends in ', h('code', null, '#token=…'), '. Without the token the server answers nothing but this page.'),
    );
    const live = document.getElementById('live');
    live.textContent = 'no token';
    live.classList.remove('on');
  }
  function fail(e) {
    if (e instanceof AuthError) return showAuth();
    const m = main();
    m.append(h('p', { class: 'msg err', role: 'alert' }, String(e.message || e)));
  }
  async function act(button, note, path, body) {
    button.disabled = true;
    note.textContent = 'asking…';
    try {
      const done = await api(path, { method: 'POST', body: body || {} });
      note.textContent = visible(done.stopping ? 'stopping ' + done.stopping : (done.out || 'done').trim());
    } catch (e) {
      if (e instanceof AuthError) return showAuth();
      note.textContent = visible('refused: ' + e.message);
    } finally {
      button.disabled = false;
    }
  }

  // ---- the races -----------------------------------------------------------------------
  function issues() {
    const by = new Map();
    for (const row of runs.values()) {
      if (!by.has(row.issue)) by.set(row.issue, []);
      by.get(row.issue).push(row);
    }
    const list = [...by.entries()].map(([issue, rows]) => {
      // Newest first: the latest race on top, each run with its start and id.
      rows.sort((a, b) => ((b.start_time || b.run_id) > (a.start_time || a.run_id) ? 1 : (b.start_time || b.run_id) < (a.start_time || a.run_id) ? -1 : b.run_id > a.run_id ? 1 : -1));
      const latest = rows.reduce((m, r) => (r.start_time && r.start_time > m ? r.start_time : m), '');
      const title = rows.reduce((t, r) => t || r.issue_title, '');
      return { issue, rows, latest, title };
    });
    list.sort((a, b) => (b.latest > a.latest ? 1 : b.latest < a.latest ? -1 : b.issue - a.issue));
    return list;
  }
  function raceRow(row) {
    const state = stateOf(row);
    const verdict = verdictOf(row);
    const note = h('span', { class: 'muted' });
    let stop = null;
    if (!readOnly && isActive(row)) {
      stop = h('button', { class: 'act danger', type: 'button', 'aria-label': 'Stop ' + agentName(row) + ' on #' + row.issue }, 'Stop');
      stop.addEventListener('click', () => act(stop, note, 'runs/' + encodeURIComponent(row.run_id) + '/stop'));
    }
    return h(
      'tr',
      { 'data-run': row.run_id, 'data-state': state.text, 'data-verdict': verdict || '' },
      h('td', null, h('a', { href: '#/run/' + encodeURIComponent(row.run_id) }, agentName(row))),
      h('td', { class: 'nowrap' }, startedAt(row)),
      h('td', null, h('span', { class: 'mono nowrap', title: row.run_id }, shortId(row.run_id))),
      h('td', null, h('span', { class: 'badge ' + state.cls }, state.text), row.reason ? h('span', { class: 'muted' }, ' ' + row.reason) : null),
      h('td', { class: 'n', 'data-start': row.start_time || '', 'data-end': row.end_time || '' }, elapsedOf(row)),
      h('td', { class: 'n' }, row.commits === null || row.commits === undefined ? '–' : String(row.commits)),
      h('td', { class: 'n' }, count(tokensOf(row))),
      h('td', { class: 'n' }, money(row.cost_usd)),
      h('td', null, verdict ? h('span', { class: 'badge v-' + verdict }, verdict) : h('span', { class: 'muted' }, '–')),
      h('td', null, pullLink(row)),
      readOnly ? null : h('td', null, stop, note),
    );
  }
  function raceCard(item) {
    const heading = 'race-' + item.issue;
    return h(
      'section',
      { class: 'card', 'data-issue': item.issue, 'aria-labelledby': heading },
      h('h2', { id: heading }, h('span', { class: 'num' }, '#' + item.issue), item.title || 'untitled'),
      h(
        'table',
        null,
        h('caption', null, item.rows.length + (item.rows.length === 1 ? ' run' : ' runs') + ' on #' + item.issue),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Agent', 'Started', 'Run', 'State', 'Elapsed', 'Commits', 'Tokens', 'Cost', 'Verdict', 'Pull request'].map((t, i) =>
              h('th', { scope: 'col', class: i >= 4 && i <= 7 ? 'n' : null }, t),
            ),
            readOnly ? null : h('th', { scope: 'col' }, 'Act'),
          ),
        ),
        h('tbody', null, item.rows.map(raceRow)),
      ),
    );
  }
  function viewRaces() {
    const m = main();
    clear(m);
    const all = issues();
    // The line under the title, kept true as runs change.
    const summary = h('p', { class: 'muted', id: 'races-summary' });
    const sum = () => {
      const active = [...runs.values()].filter(isActive).length;
      summary.textContent = runs.size + ' runs on ' + issues().length + ' issues · ' + active + ' running, queued or being checked';
    };
    sum();
    m.append(h('h1', null, 'Races'), summary);
    if (!all.length) m.append(h('p', { class: 'empty' }, 'No runs yet: `cocode-dispatch run ISSUE` starts some.'));
    // The first screens at once, the rest a few hundred rows a frame: a thousand runs stay quick.
    const list = h('div', { id: 'races' });
    m.append(list);
    let at = 0;
    const draw = (rows) => {
      for (let drawn = 0; at < all.length && drawn < rows; at++) {
        list.append(raceCard(all[at]));
        drawn += all[at].rows.length;
      }
    };
    draw(60);
    const more = () => {
      if (at >= all.length) return;
      draw(300);
      requestAnimationFrame(more);
    };
    requestAnimationFrame(more);
    return (row) => {
      sum();
      const card = list.querySelector('section[data-issue="' + Number(row.issue) + '"]');
      const item = issues().find((i) => i.issue === row.issue);
      if (!item) {
        if (card) card.remove();
        return;
      }
      const fresh = raceCard(item);
      if (card) card.replaceWith(fresh);
      else list.prepend(fresh);
    };
  }

  // ---- a run ---------------------------------------------------------------------------
  function facts(row) {
    const state = stateOf(row);
    const verdict = verdictOf(row);
    const item = (label, value) => h('div', null, h('dt', null, label), h('dd', null, value));
    return h(
      'dl',
      { class: 'facts', id: 'facts' },
      item('State', h('span', { class: 'badge ' + state.cls, id: 'state' }, state.text)),
      item('Verdict', verdict ? h('span', { class: 'badge v-' + verdict, id: 'verdict' }, verdict) : h('span', { id: 'verdict', class: 'muted' }, '–')),
      item('Elapsed', h('span', { 'data-start': row.start_time || '', 'data-end': row.end_time || '' }, elapsedOf(row))),
      item('Commits', row.commits === null || row.commits === undefined ? '–' : String(row.commits)),
      item('Tokens', count(tokensOf(row))),
      item('Cost', money(row.cost_usd)),
      item('Exit', row.exit_code === null || row.exit_code === undefined ? '–' : String(row.exit_code)),
      item('Branch', h('span', { class: 'mono' }, row.branch || '–')),
      item('READY', h('span', { class: 'mono' }, row.ready_commit ? row.ready_commit.slice(0, 12) : '–')),
      item('Pull request', pullLink(row)),
      item('Reason', row.reason || '–'),
      item('Started', startedAt(row)),
      item('Run', h('span', { class: 'mono nowrap' }, row.run_id)),
    );
  }
  function diffView(text) {
    const pre = h('pre', { tabindex: '0', 'aria-label': 'the diff' });
    for (const line of text.split('\n')) {
      let cls = null;
      if (line.startsWith('diff --git') || line.startsWith('+++ ') || line.startsWith('--- ')) cls = 'd-file';
      else if (line.startsWith('@@')) cls = 'd-hunk';
      else if (line.startsWith('+')) cls = 'd-add';
      else if (line.startsWith('-')) cls = 'd-del';
      pre.append(cls ? h('span', { class: cls }, line) : visible(line), '\n');
    }
    return pre;
  }
  function egressView(list) {
    if (!list.length) return h('p', { class: 'empty' }, 'No connection recorded (its network was open, or it made none).');
    return table(null, 'What its proxy let through and what it blocked', ['Time', 'Host', ['Port', 'n'], 'Decision', ['Bytes out/in', 'n'], 'Command'], list, (e) => [
      h('td', { class: 'mono' }, e.time),
      h('td', { class: 'mono' }, e.host),
      h('td', { class: 'n' }, String(e.port)),
      h('td', null, h('span', { class: e.allowed ? 'allowed' : 'blocked' }, e.allowed ? 'allowed' : 'blocked'), e.error ? ' ' + e.error : null),
      h('td', { class: 'n' }, bytes(e.bytes_out) + ' / ' + bytes(e.bytes_in)),
      h('td', { class: 'mono' }, e.command || ''),
    ]);
  }
  function roundsView(detail) {
    const parts = [];
    if (detail.rounds.length) {
      parts.push(
        table(null, 'Rounds on this branch', [['Round', 'n'], 'Run', 'Kind', 'State', 'Verdict'], detail.rounds, (r) => [
          h('td', { class: 'n' }, String(r.round)),
          h('td', null, h('a', { href: '#/run/' + encodeURIComponent(r.run_id), class: 'mono' }, r.run_id)),
          h('td', null, r.plan_round ? 'plan' : 'code'),
          h('td', null, r.status),
          h('td', null, r.verdict || '–'),
        ]),
      );
    }
    if (detail.plan_text) parts.push(h('h3', null, 'The plan'), h('pre', { class: 'light', tabindex: '0' }, detail.plan_text));
    if (detail.feedback) parts.push(h('h3', null, 'The feedback this round was given'), h('pre', { class: 'light', tabindex: '0' }, detail.feedback));
    if (detail.output) parts.push(h('h3', null, 'What the agent answered (output.md)'), h('pre', { class: 'light', tabindex: '0' }, detail.output));
    return parts.length ? parts : [h('p', { class: 'empty' }, 'One round, no plan.')];
  }
  function actionsView(row, detail) {
    if (readOnly) return null;
    const note = h('span', { class: 'muted', role: 'status' });
    const box = h('div', { class: 'actions' });
    const id = encodeURIComponent(row.run_id);
    if (isActive(row)) {
      const stop = h('button', { class: 'act danger', type: 'button' }, 'Stop this run');
      stop.addEventListener('click', () => act(stop, note, 'runs/' + id + '/stop'));
      box.append(stop);
    } else if (detail.plan_hash) {
      const words = h('input', { type: 'text', id: 'plan-words', size: '40' });
      const approve = h('button', { class: 'act go', type: 'button' }, 'Approve plan ' + detail.plan_hash);
      const revise = h('button', { class: 'act', type: 'button' }, 'Revise');
      const reject = h('button', { class: 'act danger', type: 'button' }, 'Reject');
      approve.addEventListener('click', () => act(approve, note, 'runs/' + id + '/plan', { verb: 'approve', hash: detail.plan_hash }));
      revise.addEventListener('click', () => act(revise, note, 'runs/' + id + '/plan', { verb: 'revise', message: words.value }));
      reject.addEventListener('click', () => act(reject, note, 'runs/' + id + '/plan', { verb: 'reject' }));
      box.append(approve, h('label', { for: 'plan-words' }, 'What to change', words), revise, reject);
    } else {
      const words = h('input', { type: 'text', id: 'again-words', size: '40' });
      const again = h('button', { class: 'act', type: 'button' }, 'Run again');
      again.addEventListener('click', () => act(again, note, 'runs/' + id + '/again', { message: words.value }));
      box.append(h('label', { for: 'again-words' }, 'Feedback for the next round', words), again);
    }
    box.append(note);
    return box;
  }
  // The verdict as a table, from check.json's items (their text, never the Markdown's markup):
  // each check's result in words and a mark of its own shape, its name, and why.
  function verdictView(detail) {
    if (!Array.isArray(detail.checks)) return [h('p', { class: 'empty' }, 'Not judged yet.')];
    const marks = { pass: '✓ pass', fail: '✗ FAIL', skipped: '– skipped' };
    const verdict = detail.pass ? 'PASS' : 'FAIL';
    return [
      h('p', null, 'Verdict: ', h('span', { class: 'badge v-' + verdict, id: 'verdict-word' }, verdict), detail.first_failure ? h('span', { class: 'muted' }, ' — ' + visible(detail.first_failure)) : null),
      table({ id: 'checks' }, 'What was checked', ['Result', 'Check', 'Why'], detail.checks, (c) => [
        h('td', { class: 'nowrap' }, h('span', { class: 'r-' + (marks[c.result] ? c.result : 'skipped') }, marks[c.result] || visible(c.result))),
        h('td', null, visible(c.name)),
        h('td', null, visible(c.reason || '')),
      ]),
    ];
  }
  function viewRun(id) {
    const m = main();
    clear(m);
    let row = runs.get(id);
    if (!row) {
      m.append(h('h1', null, 'No such run'), h('p', { class: 'empty' }, 'No run ' + id + ' in this repository.'));
      return null;
    }
    const title = h('h1', null, '#' + row.issue + ' ' + (row.issue_title || '') + ' — ' + agentName(row));
    const factsBox = h('div', null, facts(row));
    const actionsBox = h('div');
    const tabs = ['Log', 'Verdict', 'Diff', 'Egress', 'Rounds & plan', 'Issue'];
    const panels = tabs.map((t, i) => h('section', { id: 'panel-' + i, role: 'tabpanel', 'aria-labelledby': 'tab-' + i, hidden: i !== 0 }));
    const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'About this run' });
    tabs.forEach((t, i) => {
      const b = h('button', { type: 'button', role: 'tab', id: 'tab-' + i, 'aria-controls': 'panel-' + i, 'aria-selected': i === 0 ? 'true' : 'false' }, t);
      b.addEventListener('click', () => {
        tablist.querySelectorAll('button').forEach((x) => x.setAttribute('aria-selected', x === b ? 'true' : 'false'));
        panels.forEach((p, j) => (p.hidden = j !== i));
      });
      tablist.append(b);
    });
    m.append(title, factsBox, actionsBox, tablist, ...panels);

    // The log: rendered by the server as `logs` renders it, tailed live from a byte offset.
    const streamSelect = h('select', { id: 'log-stream' }, h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
    const log = h('pre', { id: 'log', tabindex: '0', 'aria-label': "the agent's output", 'aria-live': 'off' });
    const logState = h('span', { class: 'muted', id: 'log-state' }, 'reading…');
    panels[0].append(h('div', { class: 'actions' }, h('label', { for: 'log-stream' }, 'Stream', streamSelect), logState), log);
    let logStop = null;
    const startLog = () => {
      if (logStop) logStop();
      clear(log);
      let lines = 0;
      logStop = follow('runs/' + encodeURIComponent(id) + '/log?stream=' + streamSelect.value, (event, data) => {
        if (event === 'skipped') {
          log.append('[' + JSON.parse(data).bytes + ' earlier bytes not shown: `cocode-dispatch logs ' + id + '` prints them all]\n');
          return true;
        }
        const batch = JSON.parse(data);
        if (batch.length) {
          const nearEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 30;
          log.append(batch.map(visible).join('\n') + '\n');
          lines += batch.length;
          if (lines > 20000 && log.firstChild) log.firstChild.remove();
          if (nearEnd) log.scrollTop = log.scrollHeight;
        }
        if (event === 'end') {
          logState.textContent = lines ? 'the run has ended' : 'the run has ended; it wrote nothing on ' + streamSelect.value;
          return false;
        }
        logState.textContent = 'live';
        return true;
      });
    };
    streamSelect.addEventListener('change', startLog);
    startLog();

    let pending = null;
    const loadDetail = async () => {
      const detail = await api('runs/' + encodeURIComponent(id));
      if (detail.row) row = detail.row;
      clear(factsBox);
      factsBox.append(facts(row));
      clear(actionsBox);
      const actions = actionsView(row, detail);
      if (actions) actionsBox.append(actions);
      for (const p of panels.slice(1)) clear(p);
      panels[1].append(...verdictView(detail));
      panels[2].append(detail.diff ? diffView(detail.diff) : h('p', { class: 'empty' }, 'No change yet.'));
      if (detail.diff_cut) panels[2].append(h('p', { class: 'muted' }, 'The diff is longer: its first 512 KiB are shown.'));
      panels[3].append(egressView(detail.egress || []));
      panels[4].append(...roundsView(detail));
      panels[5].append(h('pre', { class: 'light', tabindex: '0' }, detail.issue_body || ''));
    };
    loadDetail().catch(fail);
    return {
      changed: (changed) => {
        if (changed.run_id !== id) return;
        row = changed;
        clear(factsBox);
        factsBox.append(facts(row));
        clearTimeout(pending);
        pending = setTimeout(() => loadDetail().catch(fail), 150);
      },
      leave: () => logStop && logStop(),
    };
  }

  // ---- the scorecard -------------------------------------------------------------------
  function barChart(title, rows, value, text, options = {}) {
    const width = 640, label = 190, right = 70, rowH = 26, top = 30;
    const shown = rows.filter((r) => value(r) !== null && value(r) !== undefined);
    const height = top + Math.max(1, shown.length) * rowH + 24;
    const most = Math.max(0, ...shown.map((r) => (options.high ? options.high(r) : value(r))));
    const max = options.max || niceMax(most, options.axis === duration);
    const x = (v) => label + ((width - label - right) * v) / max;
    const svg = s('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'aria-label': title }, s('title', null, title));
    svg.append(s('text', { x: 0, y: 16, 'font-weight': '600' }, title));
    for (let i = 0; i <= 4; i++) {
      const gx = label + ((width - label - right) * i) / 4;
      svg.append(s('line', { class: 'grid', x1: gx, x2: gx, y1: top - 6, y2: height - 20 }));
      svg.append(s('text', { x: gx, y: height - 6, 'text-anchor': 'middle' }, options.axis ? options.axis((max * i) / 4) : ''));
    }
    if (!shown.length) svg.append(s('text', { x: label, y: top + 16 }, 'nothing to show'));
    shown.forEach((r, i) => {
      const y = top + i * rowH;
      svg.append(s('text', { x: label - 8, y: y + 15, 'text-anchor': 'end' }, r.key.length > 28 ? r.key.slice(0, 27) + '…' : r.key));
      svg.append(s('rect', { class: 'bar ' + (options.cls || ''), x: label, y: y + 3, width: Math.max(1, x(value(r)) - label), height: rowH - 9, rx: 3 }));
      if (options.low && options.high) {
        const yy = y + rowH / 2 - 1;
        svg.append(s('line', { class: 'whisker', x1: x(options.low(r)), x2: x(options.high(r)), y1: yy, y2: yy }));
        svg.append(s('line', { class: 'whisker', x1: x(options.low(r)), x2: x(options.low(r)), y1: yy - 5, y2: yy + 5 }));
        svg.append(s('line', { class: 'whisker', x1: x(options.high(r)), x2: x(options.high(r)), y1: yy - 5, y2: yy + 5 }));
      }
      svg.append(s('text', { x: width - right + 6, y: y + 15 }, text(r)));
    });
    return h('figure', { class: 'card chart' }, svg);
  }
  function viewScorecard(query) {
    const m = main();
    clear(m);
    const params = new URLSearchParams(query);
    const since = params.get('since') || '30d', by = params.get('by') || 'agent,kind', source = params.get('source') || 'live';
    const agent = params.get('agent') || '', kind = params.get('kind') || '';
    const select = (id, label, value, options) =>
      h('label', { for: id }, label, h('select', { id }, options.map(([v, t]) => h('option', { value: v, selected: v === value }, t))));
    const filters = h(
      'form',
      { class: 'filters', 'aria-label': 'Filters' },
      select('f-since', 'Since', since, [['7d', 'a week'], ['30d', '30 days'], ['90d', '90 days'], ['365d', 'a year']]),
      select('f-by', 'Rows by', by, [['agent,kind', 'agent and kind'], ['agent', 'agent'], ['kind', 'kind'], ['model', 'model'], ['agent,model', 'agent and model']]),
      select('f-source', 'Runs', source, [['live', 'live'], ['replay', 'replays'], ['all', 'all']]),
      h('label', { for: 'f-agent' }, 'Agent', h('input', { type: 'text', id: 'f-agent', value: agent, size: '12' })),
      h('label', { for: 'f-kind' }, 'Kind', h('input', { type: 'text', id: 'f-kind', value: kind, size: '12' })),
    );
    const apply = (e) => {
      if (e) e.preventDefault();
      const p = new URLSearchParams();
      p.set('since', filters.querySelector('#f-since').value);
      p.set('by', filters.querySelector('#f-by').value);
      p.set('source', filters.querySelector('#f-source').value);
      const a = filters.querySelector('#f-agent').value.trim(), k = filters.querySelector('#f-kind').value.trim();
      if (a) p.set('agent', a);
      if (k) p.set('kind', k);
      location.hash = '#/scorecard?' + p.toString();
    };
    filters.addEventListener('change', apply);
    filters.addEventListener('submit', apply);
    const out = h('div', null, h('p', { class: 'muted' }, 'reading…'));
    m.append(h('h1', null, 'Scorecard'), filters, out);
    const q = new URLSearchParams({ since, by, source });
    api('report?' + q.toString())
      .then((report) => {
        clear(out);
        const rows = report.rows.filter((r) => (!agent || (r.keys.agent || '').includes(agent)) && (!kind || (r.keys.kind || '').includes(kind)));
        out.append(h('p', { class: 'muted' }, rows.length + ' rows, runs since ' + report.since.slice(0, 10)));
        if (!rows.length) {
          out.append(h('p', { class: 'empty' }, 'No runs match.'));
          return;
        }
        out.append(
          h(
            'div',
            { class: 'charts' },
            barChart('PASS rate, with its 95 % interval', rows, (r) => r.pass_rate, (r) => percent(r.pass_rate) + ' of ' + r.judged, {
              max: 1,
              low: (r) => (r.pass_rate_interval ? r.pass_rate_interval[0] : r.pass_rate),
              high: (r) => (r.pass_rate_interval ? r.pass_rate_interval[1] : r.pass_rate),
              axis: percent,
            }),
            barChart('Cost per PASS', rows, (r) => r.cost_per_pass_usd, (r) => money(r.cost_per_pass_usd), { cls: 'warm', axis: money }),
            barChart('Median time to READY', rows, (r) => r.median_seconds_to_ready, (r) => duration(r.median_seconds_to_ready), { cls: 'alt', axis: duration }),
            barChart('Merge rate (merged of decided)', rows, (r) => r.merge_rate, (r) => percent(r.merge_rate), { cls: 'rose', max: 1, axis: percent }),
          ),
        );
        const figures = ['Runs', 'Not judged', 'PASS', 'Interval', 'Cost/PASS', 'To READY', 'Merged', 'Reverted', 'Cost'].map((t) => [t, 'n']);
        out.append(
          table({ class: 'card' }, 'The figures behind the charts', ['Row', ...figures], rows, (r) => [
            h('th', { scope: 'row' }, r.key),
            h('td', { class: 'n' }, String(r.runs)),
            // Interrupted, or whose agent never started: counted apart, never in the PASS rate.
            h('td', { class: 'n', title: (r.interrupted || 0) + ' interrupted, ' + (r.never_started || 0) + ' never started' },
              (r.interrupted || 0) + (r.never_started || 0) ? [r.interrupted ? r.interrupted + ' interrupted' : null, r.never_started ? r.never_started + ' never started' : null].filter(Boolean).join(', ') : '0'),
            h('td', { class: 'n' }, r.passed + '/' + r.judged),
            h('td', { class: 'n' }, r.pass_rate_interval ? percent(r.pass_rate_interval[0]) + '–' + percent(r.pass_rate_interval[1]) : '–'),
            h('td', { class: 'n' }, money(r.cost_per_pass_usd)),
            h('td', { class: 'n' }, duration(r.median_seconds_to_ready)),
            h('td', { class: 'n' }, r.merged + '/' + (r.merged + r.closed_unmerged)),
            h('td', { class: 'n' }, String(r.reverted)),
            h('td', { class: 'n' }, money(r.cost_usd)),
          ]),
        );
      })
      .catch((e) => {
        clear(out);
        if (e instanceof AuthError) return showAuth();
        out.append(h('p', { class: 'msg err', role: 'alert' }, String(e.message)));
      });
    return null;
  }

  // ---- environments and the queue ------------------------------------------------------
  function viewEnvironments() {
    const m = main();
    clear(m);
    const envs = h('div', null, h('p', { class: 'muted' }, 'reading…'));
    const queue = h('div', null, h('p', { class: 'muted' }, 'reading…'));
    m.append(h('h1', null, 'Environments & queue'), h('h2', null, 'Prepared environments'), envs, h('h2', null, 'The queue of watch and serve'), queue);
    api('environments')
      .then((list) => {
        clear(envs);
        if (!list.length) return envs.append(h('p', { class: 'empty' }, 'None prepared: `cocode-dispatch env build` makes one.'));
        envs.append(
          table({ class: 'card' }, list.length + ' environments, shared copy-on-write by the runs', ['Key', 'Source', ['Size', 'n'], ['Files', 'n'], 'Built', 'Last used', 'Runs now', ['Uses', 'n']], list, (e) => [
            h('td', { class: 'mono' }, e.key.slice(0, 16)),
            h('td', null, e.source || '–'),
            h('td', { class: 'n' }, bytes(e.size || 0)),
            h('td', { class: 'n' }, String(e.files)),
            h('td', null, age(e.created)),
            h('td', null, age(e.last_used)),
            h('td', null, (e.live || []).join(', ') || '–'),
            h('td', { class: 'n' }, String(e.uses)),
          ]),
        );
      })
      .catch(fail);
    api('queue')
      .then((q) => {
        clear(queue);
        queue.append(h('p', null, q.deliveries + ' webhook deliveries waiting to be taken'));
        if (!q.watch.length) return queue.append(h('p', { class: 'empty' }, 'No issue held by a watcher here.'));
        queue.append(
          table({ class: 'card' }, 'Issues a watcher holds, step by step', ['Issue', 'Step', 'Asked by', 'Kind', 'Agents', 'Runs', 'Updated'], q.watch, (e) => [
            h('td', null, '#' + e.issue),
            h('td', null, e.phase),
            h('td', null, e.by || '–'),
            h('td', null, e.kind),
            h('td', null, (e.agents || []).join(', ') || 'all'),
            h('td', null, (e.runs || []).map((id) => h('a', { href: '#/run/' + encodeURIComponent(id), class: 'mono' }, id + ' '))),
            h('td', null, age(e.updated_at)),
          ]),
        );
      })
      .catch(fail);
    return null;
  }

  // ---- routes --------------------------------------------------------------------------
  let current = null;
  function route() {
    if (current && current.leave) current.leave();
    listeners.clear();
    current = null;
    if (!token()) return showAuth();
    if (!loaded) return;
    const hash = location.hash || '#/';
    const [path, query] = hash.slice(1).split('?');
    let view = 'races';
    if (path.startsWith('/run/')) {
      view = 'run';
      current = viewRun(decodeURIComponent(path.slice(5)));
    } else if (path === '/scorecard') {
      view = 'scorecard';
      viewScorecard(query || '');
    } else if (path === '/environments') {
      view = 'environments';
      viewEnvironments();
    } else {
      current = { changed: viewRaces() };
    }
    if (current && current.changed) listeners.add(current.changed);
    document.querySelectorAll('.top nav a').forEach((a) => {
      if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    });
    document.title = 'cocode · ' + (view === 'run' ? 'run' : view);
  }
  // The clocks of running runs, once a second while the page is seen.
  setInterval(() => {
    if (document.hidden) return;
    for (const cell of document.querySelectorAll('[data-start]')) {
      if (!cell.dataset.start || cell.dataset.end) continue;
      cell.textContent = duration((Date.now() - Date.parse(cell.dataset.start)) / 1000);
    }
  }, 1000);
  window.addEventListener('hashchange', route);
  if (channel)
    channel.onmessage = (e) => {
      if (e.data === 'token?' && token()) channel.postMessage({ token: token() });
      else if (e.data && typeof e.data.token === 'string' && !token() && tokenShape.test(e.data.token)) {
        sessionStorage.setItem(tokenKey, e.data.token);
        loadRuns().then(route, fail);
      }
    };
  if (!token()) {
    showAuth();
    if (channel) channel.postMessage('token?');
  } else loadRuns().then(route, fail);
})();
