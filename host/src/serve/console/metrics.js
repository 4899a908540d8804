// The Metrics page: charts of the last five minutes drawn from the server's own /metrics
// (OpenMetrics text), sampled every 2 s from the first time the page is shown until the
// token is forgotten: calls/s, blocks/s,
// approvals decided per second, and the p50 / p99 time of a plugin step (from the
// hak_plugin_call_seconds histogram's buckets), for every plugin or the one chosen.
'use strict';

(() => {
  const { $, element } = hak;
  const SAMPLE_MS = 2000;
  const KEEP = 150; // 5 minutes of samples
  const SVG = 'http://www.w3.org/2000/svg';
  const samples = [];
  let timer = null;

  // OpenMetrics text → [{name, labels, value}].
  function parse(text) {
    const out = [];
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const match = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!match) continue;
      const labels = {};
      for (const l of (match[2] || '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
      out.push({ name: match[1], labels, value: Number(match[3]) });
    }
    return out;
  }

  // What one scrape says: counters summed, and the step histogram's buckets per plugin.
  function sample(metrics) {
    const s = { t: Date.now(), calls: 0, blocks: 0, approvals: 0, buckets: {} };
    for (const m of metrics) {
      if (m.name === 'hak_calls_total') {
        s.calls += m.value;
        if (m.labels.outcome === 'blocked') s.blocks += m.value;
      } else if (m.name === 'hak_approvals_total') {
        s.approvals += m.value;
      } else if (m.name === 'hak_plugin_call_seconds_bucket') {
        for (const plugin of ['', m.labels.plugin]) {
          const byLe = (s.buckets[plugin] = s.buckets[plugin] || {});
          byLe[m.labels.le] = (byLe[m.labels.le] || 0) + m.value;
        }
      }
    }
    return s;
  }

  // The q-quantile of what landed between two samples' cumulative buckets (linear within a
  // bucket, as Prometheus's histogram_quantile does), in microseconds; null when nothing did.
  function quantile(before, after, q) {
    if (!before || !after) return null;
    const les = Object.keys(after)
      .map((le) => [le, le === '+Inf' ? Infinity : Number(le)])
      .sort((a, b) => a[1] - b[1]);
    const counts = les.map(([le]) => (after[le] || 0) - (before[le] || 0));
    const total = counts[counts.length - 1];
    if (!(total > 0)) return null;
    const rank = q * total;
    let lower = 0;
    for (let i = 0; i < les.length; i++) {
      if (counts[i] >= rank) {
        const upper = les[i][1];
        if (upper === Infinity) return lower * 1e6;
        const below = i > 0 ? counts[i - 1] : 0;
        const inBucket = counts[i] - below;
        const fraction = inBucket > 0 ? (rank - below) / inBucket : 1;
        return (lower + (upper - lower) * fraction) * 1e6;
      }
      lower = les[i][1];
    }
    return null;
  }

  function series(pick) {
    const points = [];
    for (let i = 1; i < samples.length; i++) {
      const value = pick(samples[i - 1], samples[i], (samples[i].t - samples[i - 1].t) / 1000);
      if (value !== null && Number.isFinite(value)) points.push([samples[i].t, value]);
    }
    return points;
  }

  function svg(tag, attributes) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    return node;
  }

  // A line chart of `lines` ([{label, points, className}]) over the samples' time span.
  function chart(id, title, unit, lines) {
    const box = $(id);
    const width = 520;
    const height = 130;
    const pad = { left: 48, right: 8, top: 8, bottom: 18 };
    const all = lines.flatMap((l) => l.points);
    const t0 = samples.length ? samples[0].t : 0;
    const t1 = samples.length ? samples[samples.length - 1].t : 1;
    const top = Math.max(1e-9, ...all.map((p) => p[1])) * 1.1;
    const x = (t) => pad.left + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.left - pad.right);
    const y = (v) => height - pad.bottom - (v / top) * (height - pad.top - pad.bottom);
    const picture = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img' });
    picture.append(
      svg('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), class: 'axis' }),
      svg('line', { x1: pad.left, y1: pad.top, x2: pad.left, y2: y(0), class: 'axis' }),
    );
    const label = (text, at) => {
      const node = svg('text', at);
      node.textContent = text;
      return node;
    };
    const fmt = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));
    picture.append(
      label(fmt(top / 1.1), { x: pad.left - 4, y: y(top / 1.1) + 4, class: 'tick end' }),
      label('0', { x: pad.left - 4, y: y(0) + 4, class: 'tick end' }),
      label(Math.round((t1 - t0) / 1000) + ' s', { x: pad.left, y: height - 4, class: 'tick' }),
      label('now', { x: width - pad.right, y: height - 4, class: 'tick end' }),
    );
    for (const line of lines) {
      if (line.points.length === 0) continue;
      picture.append(
        svg('polyline', {
          points: line.points.map(([t, v]) => x(t).toFixed(1) + ',' + y(v).toFixed(1)).join(' '),
          class: 'series ' + line.className,
        }),
      );
    }
    const latest = lines
      .map((l) => l.label + ' ' + (l.points.length ? fmt(l.points[l.points.length - 1][1]) : '–') + ' ' + unit)
      .join(' · ');
    box.replaceChildren(element('h3', null, title), element('p', 'latest', latest), picture);
  }

  function draw() {
    const plugin = $('metrics-plugin').value;
    chart('chart-calls', 'Calls', 'per s', [
      { label: 'calls', className: 'a', points: series((a, b, dt) => (b.calls - a.calls) / dt) },
    ]);
    chart('chart-blocks', 'Blocked calls', 'per s', [
      { label: 'blocked', className: 'b', points: series((a, b, dt) => (b.blocks - a.blocks) / dt) },
    ]);
    chart('chart-approvals', 'Approvals decided', 'per s', [
      { label: 'decided', className: 'a', points: series((a, b, dt) => (b.approvals - a.approvals) / dt) },
    ]);
    const buckets = (s) => s.buckets[plugin];
    chart('chart-latency', 'Plugin step time' + (plugin ? ' (' + plugin + ')' : ' (all plugins)'), 'µs', [
      { label: 'p50', className: 'a', points: series((a, b) => quantile(buckets(a), buckets(b), 0.5)) },
      { label: 'p99', className: 'b', points: series((a, b) => quantile(buckets(a), buckets(b), 0.99)) },
    ]);
  }

  function plugins(latest) {
    const select = $('metrics-plugin');
    const names = Object.keys(latest.buckets).filter((n) => n).sort();
    const have = [...select.options].map((o) => o.value).filter((v) => v);
    if (names.join() === have.join()) return;
    const chosen = select.value;
    select.replaceChildren(element('option', null, 'all plugins'));
    select.options[0].value = '';
    for (const name of names) select.append(element('option', null, name));
    select.value = names.includes(chosen) ? chosen : '';
  }

  async function scrape() {
    try {
      const s = sample(parse(await hak.fetchText('/metrics')));
      samples.push(s);
      if (samples.length > KEEP) samples.shift();
      plugins(s);
      draw();
      $('metrics-samples').textContent = samples.length + ' samples';
    } catch (e) {
      hak.handle(e);
    }
  }

  hak.page('metrics', {
    start: () => $('metrics-plugin').addEventListener('change', draw),
    // Sampling runs on its own clock while signed in; showing the page only draws.
    refresh: async () => {
      if (!timer) {
        timer = setInterval(scrape, SAMPLE_MS);
        await scrape();
      } else {
        draw();
      }
    },
    clear: () => {
      clearInterval(timer);
      timer = null;
      samples.length = 0;
    },
  });
})();
