// dynaburst's live web view: polls /metrics.json once a second and draws,
// per table and GSI, consumed and throttled units per second, the partition
// heat map, the last throttling events and the top keys, in plain SVG.
// `window.dynaburstRender(doc)` draws a fixed document instead (bench's
// report.html embeds this file and its data).
(function () {
  "use strict";
  const WINDOW_SECONDS = 300;
  const POLL_MS = 1000;
  const NS = "http://www.w3.org/2000/svg";
  const STATIC = !!window.DYNABURST_STATIC;
  // The narrowest time span drawn, so that a new table's first seconds
  // are not one wide bar.
  const MIN_SPAN_SECONDS = 60;
  const HASH_SPACE = 2 ** 128;
  const COLORS = { read: "#2f6fbf", write: "#1f8a5b", throttled: "#d62f2f", prov: "#6b4fbb", ceiling: "#d98a00", warm: "#0b8793", part: "#8a96a6" };

  // key -> { meta: the table's latest document entry, seconds: [Second] }
  const state = new Map();
  let latestSecond = null;

  const nameOf = (t) => (t.index ? t.table + " / " + t.index : t.table);
  const hashFrac = (hex) => parseInt(hex.slice(0, 13), 16) / 2 ** 52;

  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function h(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
    if (n >= 1e4) return (n / 1e3).toFixed(0) + "k";
    if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
    return String(Math.round(n * 10) / 10);
  }
  function bytes(n) {
    const u = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i ? n.toFixed(1) : n) + " " + u[i];
  }
  function clock(second) {
    return new Date(second * 1000).toISOString().slice(11, 19);
  }
  function niceMax(v) {
    if (v <= 0) return 10;
    const p = 10 ** Math.floor(Math.log10(v));
    for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function merge(doc) {
    const seen = new Set();
    for (const t of doc.tables) {
      const k = nameOf(t);
      seen.add(k);
      let s = state.get(k);
      if (!s) { s = { seconds: [] }; state.set(k, s); }
      const known = s.seconds.length ? s.seconds[s.seconds.length - 1].second : -1;
      for (const sec of t.seconds) if (sec.second > known) s.seconds.push(sec);
      s.meta = t;
      if (s.seconds.length) {
        const last = s.seconds[s.seconds.length - 1].second;
        latestSecond = latestSecond === null ? last : Math.max(latestSecond, last);
      }
    }
    for (const k of [...state.keys()]) if (!seen.has(k)) state.delete(k);
    if (latestSecond !== null && !STATIC) {
      for (const s of state.values()) {
        while (s.seconds.length && s.seconds[0].second <= latestSecond - WINDOW_SECONDS) s.seconds.shift();
      }
    }
  }

  // Time axis: ticks every 15, 30 or 60 s; clock time live, seconds from
  // the start in a report.
  function timeAxis(svg, x, y0, from, to) {
    el("line", { x1: x(from), x2: x(to + 1), y1: y0, y2: y0, class: "axis" }, svg);
    const span = to + 1 - from;
    const step = span <= 90 ? 15 : span <= 180 ? 30 : span <= 600 ? 60 : 300;
    for (let s = Math.ceil(from / step) * step; s <= to + 1; s += step) {
      el("line", { x1: x(s), x2: x(s), y1: y0, y2: y0 + 4, class: "axis" }, svg);
      el("text", { x: x(s), y: y0 + 15, "text-anchor": "middle" }, svg, STATIC ? `${s} s` : clock(s));
    }
    el("text", { x: x(to + 1), y: y0 + 28, "text-anchor": "end" }, svg, STATIC ? "seconds into the load" : "time (UTC)");
  }

  // Consumed units per second for one op against the left axis, with the
  // capacity lines; throttled items per second against the right axis (a
  // retrying client's throttled items can outnumber its writes 100 to 1).
  function rateChart(t, seconds, op, from, to) {
    const W = 640, H = 240, L = 50, R = 50, T = 10, B = 34;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "rate-chart", "data-op": op });
    const x = (s) => L + ((s - from) / (to + 1 - from)) * (W - L - R);
    const consumed = seconds.map((s) => [s.second, op === "write" ? s.write_units : s.read_units]);
    const throttled = seconds.map((s) => [s.second, op === "write" ? s.throttled_write_items : s.throttled_read_items]);
    const lines = [];
    if (t.provisioned) lines.push({ v: t.provisioned[op], color: COLORS.prov, label: "provisioned" });
    if (t.on_demand_ceiling) lines.push({ v: t.on_demand_ceiling[op], color: COLORS.ceiling, label: "on-demand ceiling" });
    if (t.warm_throughput) lines.push({ v: t.warm_throughput[op], color: COLORS.warm, label: "warm throughput" });
    if (t.partition_max) lines.push({ v: t.partition_max[op], color: COLORS.part, label: "one partition's max" });
    let peak = 0, peakT = 0;
    for (const [, v] of consumed) peak = Math.max(peak, v);
    for (const [, v] of throttled) peakT = Math.max(peakT, v);
    // Capacity lines far above the traffic would flatten it: they are drawn
    // when within 3x of the peak (and named in the legend either way).
    const pmax = t.partition_max ? t.partition_max[op] : 0;
    const top = niceMax(Math.max(peak, ...lines.filter((l) => l.v <= Math.max(peak * 3, pmax)).map((l) => l.v)) * 1.05);
    const topT = niceMax(peakT * 1.05);
    const y = (v) => T + (1 - Math.min(v, top) / top) * (H - T - B);
    const yT = (v) => T + (1 - Math.min(v, topT) / topT) * (H - T - B);
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }, svg);
      el("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", fill: COLORS[op] }, svg, fmt(v));
      el("text", { x: W - R + 6, y: y(v) + 4, "text-anchor": "start", style: `fill:${COLORS.throttled}` }, svg, fmt((topT * i) / 4));
    }
    const unit = op === "write" ? "WCU" : "RCU";
    const mid = (H - B) / 2;
    el("text", { x: 11, y: mid, transform: `rotate(-90 11 ${mid})`, "text-anchor": "middle", style: `fill:${COLORS[op]}` }, svg, `consumed ${unit}/s`);
    el("text", { x: W - 8, y: mid, transform: `rotate(90 ${W - 8} ${mid})`, "text-anchor": "middle", style: `fill:${COLORS.throttled}` }, svg, "throttled items/s");
    for (const l of lines) {
      if (l.v > top) continue;
      el("line", { x1: L, x2: W - R, y1: y(l.v), y2: y(l.v), stroke: l.color, "stroke-width": 1.5, "stroke-dasharray": "6 4", class: "cap-line", "data-label": l.label }, svg);
    }
    const path = (pts, yy) => pts.map(([s, v], i) => (i ? "L" : "M") + x(s + 0.5).toFixed(1) + " " + yy(v).toFixed(1)).join(" ");
    const sum = (pts) => pts.reduce((a, [, v]) => a + v, 0);
    if (consumed.length) {
      el("path", { d: path(throttled, yT), fill: "none", stroke: COLORS.throttled, "stroke-width": 1.5, opacity: 0.85, class: "series-throttled", "data-total": sum(throttled) }, svg);
      el("path", { d: path(consumed, y) + ` L${x(consumed[consumed.length - 1][0] + 0.5)} ${y(0)} L${x(consumed[0][0] + 0.5)} ${y(0)} Z`, fill: COLORS[op], opacity: 0.15 }, svg);
      el("path", { d: path(consumed, y), fill: "none", stroke: COLORS[op], "stroke-width": 2.5, class: "series-consumed", "data-total": sum(consumed) }, svg);
    }
    el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, svg);
    el("line", { x1: W - R, x2: W - R, y1: T, y2: H - B, class: "axis" }, svg);
    timeAxis(svg, x, H - B, from, to);
    const legend = h("div", { class: "legend" });
    const item = (color, label, dash) => {
      const s = h("span", {});
      s.appendChild(h("i", dash ? { class: "dash", style: `color:${color}` } : { style: `background:${color}` }));
      s.appendChild(document.createTextNode(label));
      legend.appendChild(s);
    };
    item(COLORS[op], `consumed ${unit}/s (left)`);
    item(COLORS.throttled, `throttled ${op}s, items/s (right)`);
    for (const l of lines) item(l.color, `${l.label} ${fmt(l.v)}${l.v > top ? " (off scale)" : ""}`, true);
    const box = h("div", { class: "chart" });
    const title = h("h3", {}, `${op === "write" ? "Writes" : "Reads"}: `);
    const totalThrottled = sum(throttled);
    title.appendChild(h("span", { class: "throttled-total", "data-op": op, "data-value": String(totalThrottled) }, `${fmt(sum(consumed))} ${unit} consumed, ${fmt(totalThrottled)} items throttled in view`));
    box.append(title, svg, legend);
    return box;
  }

  // Partition starts at second `s`: today's, less the split points of
  // splits that happened after it.
  function startsAt(t, s) {
    const later = new Set(t.splits.filter((sp) => sp.at_ms >= (s + 1) * 1000).map((sp) => sp.split_at));
    return t.partitions.map((p) => p.start).filter((st) => !later.has(st));
  }

  function heatColor(f) {
    // white -> amber -> red -> dark red at and beyond the partition's max.
    const stops = [[0, [247, 249, 252]], [0.25, [255, 224, 138]], [0.6, [246, 140, 50]], [0.9, [214, 47, 47]], [1.0, [128, 0, 38]]];
    f = Math.max(0, Math.min(1, f));
    for (let i = 1; i < stops.length; i++) {
      if (f <= stops[i][0]) {
        const [a, ca] = stops[i - 1], [b, cb] = stops[i];
        const k = (f - a) / (b - a);
        return `rgb(${ca.map((c, j) => Math.round(c + (cb[j] - c) * k)).join(",")})`;
      }
    }
    return "rgb(128,0,38)";
  }

  function heatMap(t, seconds, from, to) {
    const W = 1300, H = 300, L = 62, R = 90, T = 10, B = 34;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "heat-map" });
    const x = (s) => L + ((s - from) / (to + 1 - from)) * (W - L - R);
    const y = (f) => T + f * (H - T - B);
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: heatColor(0), stroke: "#d8dee6" }, svg);
    const cw = Math.max(1, x(from + 1) - x(from));
    let starts = null, key = "";
    let ends = new Map();
    for (const sec of seconds) {
      const st = startsAt(t, sec.second);
      const k = st.join(",");
      if (k !== key) {
        key = k; starts = st; ends = new Map();
        st.forEach((a, i) => ends.set(a, i + 1 < st.length ? hashFrac(st[i + 1]) : 1));
      }
      for (const p of sec.partitions) {
        const f = Math.max(p.write_units / t.partition_max.write, p.read_units / t.partition_max.read);
        const y0 = y(hashFrac(p.start)), y1 = y(ends.has(p.start) ? ends.get(p.start) : 1);
        const r = el("rect", { x: x(sec.second).toFixed(1), y: y0.toFixed(1), width: cw.toFixed(2), height: Math.max(1, y1 - y0).toFixed(1), fill: heatColor(f), class: "heat-cell" + (p.throttled_items ? " throttled" : ""), "data-partition": p.start, "data-fraction": f.toFixed(3), "data-second": sec.second }, svg);
        el("title", {}, r, `${clock(sec.second)} partition ${p.start.slice(0, 8)}…: ${Math.round(f * 100)}% of max, ${fmt(p.write_units)} WCU, ${fmt(p.read_units)} RCU, ${p.throttled_items} throttled`);
        if (p.throttled_items) {
          // Throttled seconds: a dark tick at the top of the partition's row.
          el("rect", { x: x(sec.second).toFixed(1), y: y0.toFixed(1), width: cw.toFixed(2), height: Math.min(4, Math.max(1, y1 - y0)).toFixed(1), fill: "#1d2430", class: "throttle-mark" }, svg);
        }
      }
    }
    // Partition boundaries now, and the splits in view.
    for (const p of t.partitions) {
      el("line", { x1: L, x2: W - R, y1: y(hashFrac(p.start)), y2: y(hashFrac(p.start)), stroke: "#c3ccd7", "stroke-width": 0.5 }, svg);
    }
    for (const sp of t.splits) {
      const s = Math.floor(sp.at_ms / 1000);
      if (s < from || s > to) continue;
      const yy = y(hashFrac(sp.split_at));
      el("line", { x1: x(s), x2: W - R, y1: yy, y2: yy, stroke: "#1d2430", "stroke-width": 1, "stroke-dasharray": "3 2", class: "split-line" }, svg);
      el("text", { x: x(s) + 2, y: yy - 3 }, svg, `split (${sp.reason})`);
    }
    el("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }, svg);
    for (const f of [0, 0.25, 0.5, 0.75, 1]) el("text", { x: L - 6, y: y(f) + 4, "text-anchor": "end" }, svg, `${f * 100}%`);
    el("text", { x: 12, y: (H - B) / 2, transform: `rotate(-90 12 ${(H - B) / 2})`, "text-anchor": "middle" }, svg, "key space (hash range)");
    timeAxis(svg, x, H - B, from, to);
    // Colour scale.
    const sx = W - R + 18, sh = H - T - B;
    for (let i = 0; i < 50; i++) el("rect", { x: sx, y: T + sh - ((i + 1) * sh) / 50, width: 12, height: sh / 50 + 0.5, fill: heatColor(i / 49) }, svg);
    for (const f of [0, 0.5, 1]) el("text", { x: sx + 16, y: T + sh - f * sh + 4 }, svg, `${f * 100}%`);
    el("text", { x: sx - 4, y: T + sh + 15 }, svg, "of max");
    const box = h("div", { class: "chart heat" });
    box.append(h("h3", {}, `Partition heat: ${t.partition_count} partitions now (rows: key space; colour: share of one partition's max; dark tick: a throttled second)`), svg);
    return box;
  }

  function listPanel(title, headers, rows, cls) {
    const box = h("div", { class: "panel " + cls });
    box.appendChild(h("h3", {}, title));
    if (!rows.length) { box.appendChild(h("p", { class: "none" }, "none")); return box; }
    const table = h("table", { class: "list" });
    const tr = h("tr");
    headers.forEach(([text, num]) => tr.appendChild(h("th", num ? { class: "num" } : {}, text)));
    table.appendChild(tr);
    for (const r of rows) {
      const row = h("tr");
      r.forEach((v, i) => row.appendChild(h("td", headers[i][1] ? { class: "num" } : {}, v)));
      table.appendChild(row);
    }
    box.appendChild(table);
    return box;
  }

  function keyRows(list) {
    return list.map((k) => [k.sort_key === undefined ? k.partition_key : `${k.partition_key} · ${k.sort_key}`, fmt(k.count)]);
  }

  function card(t, seconds, from, to) {
    const div = h("section", { class: "table-card", "data-table": t.table, "data-index": t.index || "" });
    div.appendChild(h("h2", {}, t.index ? `${t.table} / index ${t.index}` : t.table));
    const facts = h("p", { class: "facts" });
    const fact = (label, value, cls) => {
      const s = h("span", { class: cls });
      s.append(document.createTextNode(label + " "), h("b", {}, value));
      facts.appendChild(s);
    };
    fact("mode", t.mode);
    if (t.provisioned) fact("provisioned", `${fmt(t.provisioned.read)} RCU / ${fmt(t.provisioned.write)} WCU`);
    if (t.partition_count != null) fact("partitions", String(t.partition_count), "partition-count");
    if (t.item_count != null) fact("items", t.item_count.toLocaleString("en-US"), "item-count");
    if (t.size_bytes != null) fact("size", bytes(t.size_bytes));
    if (t.totals) fact("throttled requests (total)", t.totals.throttled_requests.toLocaleString("en-US"));
    if (t.note) fact("", t.note);
    div.appendChild(facts);
    const charts = h("div", { class: "charts" });
    charts.append(rateChart(t, seconds, "write", from, to));
    if (!STATIC) charts.append(rateChart(t, seconds, "read", from, to));
    if (t.partitions && t.partitions.length) charts.append(heatMap(t, seconds, from, to));
    div.appendChild(charts);
    const panels = h("div", { class: "panels" });
    if (STATIC) return div;
    // A partition named by its share of the key space, as the heat map's rows.
    const range = (start) => {
      const starts = t.partitions.map((p) => p.start);
      const i = starts.indexOf(start);
      const end = i >= 0 && i + 1 < starts.length ? hashFrac(starts[i + 1]) : 1;
      return `${Math.round(hashFrac(start) * 100)}–${Math.round(end * 100)}% of key space`;
    };
    const events = t.throttles.slice(-10).reverse().map((e) => [new Date(e.at_ms).toISOString().slice(11, 23), e.reason, range(e.partition), e.items.toLocaleString("en-US")]);
    panels.appendChild(listPanel("Last throttling events (refusals of one reason on one partition within a second)", [["time (UTC)"], ["reason"], ["partition"], ["items", true]], events, "throttle-events"));
    if (t.top_keys) {
      const k = t.top_keys;
      panels.appendChild(listPanel("Most accessed partition keys (3×WCU + RCU, last 1–2 min)", [["key"], ["count", true]], keyRows(k.accessed_partition_keys), "top-accessed"));
      panels.appendChild(listPanel("Most throttled partition keys (items)", [["key"], ["count", true]], keyRows(k.throttled_partition_keys), "top-throttled"));
      if (k.accessed_keys.length || k.throttled_keys.length) {
        panels.appendChild(listPanel("Most accessed keys (partition · sort)", [["key"], ["count", true]], keyRows(k.accessed_keys), "top-accessed-keys"));
        panels.appendChild(listPanel("Most throttled keys (partition · sort)", [["key"], ["count", true]], keyRows(k.throttled_keys), "top-throttled-keys"));
      }
    }
    div.appendChild(panels);
    return div;
  }

  // The seconds drawn: the last WINDOW_SECONDS live (from the first second
  // seen, at least MIN_SPAN_SECONDS); each load's own seconds in a report.
  function span(seconds) {
    if (STATIC) {
      const first = seconds.length ? seconds[0].second : 0;
      const last = seconds.length ? seconds[seconds.length - 1].second : 0;
      return [first, Math.max(last, first + MIN_SPAN_SECONDS - 1)];
    }
    const to = latestSecond === null ? Math.floor(Date.now() / 1000) : latestSecond;
    let first = to;
    for (const s of state.values()) if (s.seconds.length) first = Math.min(first, s.seconds[0].second);
    const from = Math.min(Math.max(to - WINDOW_SECONDS + 1, first), to - MIN_SPAN_SECONDS + 1);
    return [from, to];
  }

  function draw() {
    const main = document.getElementById("tables");
    if (!state.size) return;
    const keys = STATIC ? [...state.keys()] : [...state.keys()].sort();
    const cards = keys.map((k) => {
      const s = state.get(k);
      const [from, to] = span(s.seconds);
      return card(s.meta, s.seconds, from, to);
    });
    main.replaceChildren(...cards);
  }

  async function poll() {
    const status = document.getElementById("status");
    try {
      const since = latestSecond === null ? "" : `?since=${latestSecond + 1}`;
      const r = await fetch("/metrics.json" + since, { cache: "no-store" });
      if (!r.ok) throw new Error("HTTP " + r.status);
      merge(await r.json());
      draw();
      status.textContent = latestSecond === null ? "waiting for traffic" : `live · last second ${clock(latestSecond)} UTC`;
    } catch (e) {
      status.textContent = "cannot reach the server: " + e.message;
    }
    setTimeout(poll, POLL_MS);
  }

  window.dynaburstRender = function (doc) {
    merge(doc);
    draw();
  };
  if (!STATIC) poll();
})();
