/* The privbandit results board: draws the views of the data in #board-data (privbandit.report.board). */
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("board-data").textContent);
  const CONFIG = {responsive: true, displaylogo: false, modeBarButtonsToRemove: ["lasso2d", "select2d"]};

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") e.textContent = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) e.setAttribute(k, v === true ? "" : v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "";
    return Math.abs(v) < 1e4 ? String(Number(v.toPrecision(4))) : v.toFixed(0);
  }
  function interval(m, lo, hi) { return lo === null || lo === undefined ? fmt(m) : `${fmt(m)} [${fmt(lo)}, ${fmt(hi)}]`; }
  function paired(p) { return p ? `${interval(p[0], p[1], p[2])} (${p[3]} seeds)` : ""; }
  function eps(e) { return e === null ? "none" : fmt(e); }
  function horizon(t) { const k = Math.log2(t); return Number.isInteger(k) ? `${t} (2^${k})` : String(t); }
  function seeds(list) {
    if (!list.length) return "no seeds";
    const run = list.every((s, i) => s === list[0] + i);
    return `${list.length} seed${list.length > 1 ? "s" : ""} (` + (run && list.length > 2 ? `${list[0]}-${list[list.length - 1]}` : list.join(", ")) + ")";
  }
  function alpha(hex, a) {
    const n = parseInt(hex.slice(1), 16);
    return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${a})`;
  }
  function commands(idx) {
    return el("p", {class: "command"}, "Data: ", ...idx.flatMap((i, j) => [j ? "; " : "", el("code", {text: D.sources[i].command})]));
  }
  function colour(agent) { return (D.agents[agent] || {color: "#777777"}).color; }
  function mark(flag) { return flag ? el("span", {class: flag === D.marks.worse ? "mark worse" : "mark nobetter", text: flag}) : ""; }

  /* A sortable table: columns are {label, value(row) for sorting, cell(row) -> node or text}. ``order`` ({col, dir},
     col -1 unsorted) is the caller's, kept across the table's redraws (a filter or a toggle keeps the sort). */
  function sortable(id, columns, rows, order) {
    const table = el("table", {id, class: "sortable"});
    const body = el("tbody");
    order = order || {col: -1, dir: 1};
    function fill() {
      body.replaceChildren(...rows.map(r => el("tr", {"data-agent": r.agent}, ...columns.map(c => {
        const v = c.cell(r); return el("td", {class: c.num ? "num" : null}, v);
      }))));
    }
    function sort() {
      const c = columns[order.col];
      if (!c) return;
      rows.sort((a, b) => {
        const x = c.value(a), y = c.value(b);
        if (x === y) return 0; if (x === null || x === undefined || x === "") return 1;
        if (y === null || y === undefined || y === "") return -1;
        return (x < y ? -1 : 1) * order.dir;
      });
      head.querySelectorAll("th").forEach((th, j) => th.setAttribute("aria-sort", j === order.col ? (order.dir > 0 ? "ascending" : "descending") : "none"));
    }
    const head = el("tr", {}, ...columns.map((c, i) => el("th", {scope: "col", tabindex: 0, title: c.help || "click to sort", onclick: () => {
      order.dir = order.col === i ? -order.dir : 1; order.col = i;
      sort(); fill();
    }}, c.label)));
    table.append(el("thead", {}, head), body);
    sort(); fill();
    return el("div", {class: "scroll"}, table);
  }

  function rowColumns(withBoard) {
    const cols = [];
    if (withBoard) cols.push({label: "board", value: r => r.board.title, cell: r => el("a", {href: "#board", onclick: () => showBoard(r.board.id), text: r.board.title})});
    return cols.concat([
      {label: "rank", num: true, value: r => r.rank, cell: r => String(r.rank)},
      {label: "agent", value: r => r.agent, cell: r => el("span", {class: "agent"}, el("span", {class: "swatch", style: `background:${colour(r.agent)}`}), r.agent)},
      {label: "mark", value: r => r.flag, cell: r => mark(r.flag)},
      {label: "privacy", value: r => r.model, cell: r => r.model},
      {label: "seeds", num: true, value: r => r.n_seeds, cell: r => String(r.n_seeds)},
      {label: "final regret [95% CI]", num: true, value: r => r.mean, cell: r => interval(r.mean, r.low, r.high)},
      {label: "minus best non-private, paired", help: "per-seed final regret minus the board's best non-private agent's: mean [95% CI] over the shared seeds", num: true, value: r => r.vs_public ? r.vs_public[0] : null, cell: r => paired(r.vs_public)},
      {label: "minus best private, paired", help: "per-seed final regret minus the board's best private agent's: mean [95% CI] over the shared seeds", num: true, value: r => r.vs_private ? r.vs_private[0] : null, cell: r => paired(r.vs_private)},
      {label: "ledger eps / spec", help: "the worst user's composed epsilon in the agent's privacy ledgers, over the epsilon it was run at", num: true, value: r => r.ledger, cell: r => r.ledger === null ? "" : `${fmt(r.ledger)} / ${eps(r.board.epsilon)}`},
    ]);
  }

  /* ---- header ---- */
  function header() {
    const box = el("section", {id: "sources"}, el("h2", {text: "What ran"}));
    D.sources.forEach(s => box.append(el("div", {class: "source"},
      el("p", {class: "ran"}, el("strong", {text: s.name}), `: ${s.ran}` + (s.challenger ? `; challenger ${s.challenger}` : "")),
      commands([D.sources.indexOf(s)]), el("ul", {}, ...s.notes.map(n => el("li", {text: n}))))));
    box.append(el("p", {class: "note", text: `Curves: mean cumulative regret over seeds with its 95% band (log scale interval), ${D.per_octave} logged rounds per doubling of t. ` +
      `Marks against ${D.uniform} play: ${D.marks.rule}. Paired differences: per-seed final regret minus that of the board's best non-private or best private agent, Student-t 95% interval (negative is better).`}));
    return box;
  }

  /* ---- one board ---- */
  const boardById = Object.fromEntries(D.boards.map(b => [b.id, b]));
  const state = {logx: true, logy: true, privateOnly: false};
  const boardOrder = {col: -1, dir: 1};  /* the board's table keeps its sort as boards and toggles change */
  const challengers = new Set(D.comparisons.map(c => c.challenger));
  function curveTraces(curve, name, color, opts) {
    const c = D.curves[curve], out = [];
    const group = opts.group || name;
    if (c.low.some(v => v !== null)) {
      const idx = c.t.map((_, i) => i).filter(i => c.low[i] !== null);
      out.push({x: idx.map(i => c.t[i]).concat(idx.map(i => c.t[i]).reverse()), y: idx.map(i => c.high[i]).concat(idx.map(i => c.low[i]).reverse()),
        fill: "toself", fillcolor: alpha(color, 0.13), line: {width: 0}, hoverinfo: "skip", showlegend: false, legendgroup: group, name: name + " band", type: "scatter", mode: "lines", meta: opts.meta});
    }
    out.push({x: c.t, y: c.mean, name, legendgroup: group, type: "scatter", mode: "lines", meta: opts.meta,
      line: {color, width: opts.width || 2, dash: opts.dash || "solid"}, hovertemplate: `${name}<br>t=%{x}<br>regret=%{y:.4g}<extra></extra>`});
    return out;
  }
  /* The legend below the plot, with room for its rows at this width (a phone's legend has one entry a row). */
  function belowLegend(layout, traces, plot, base) {
    const n = traces.filter(t => t.showlegend !== false).length;
    const width = (document.getElementById(plot) || document.body).clientWidth || 800;
    const rows = Math.ceil(n / Math.max(1, Math.floor(width / 300)));
    const axis = base - 70;
    layout.margin = Object.assign({l: 60, r: 10, t: 10}, {b: 60 + 22 * rows});
    layout.height = base + 22 * rows;
    /* no gap between legend groups: each group (an agent's curve and band) has one entry, and a phone's column of
       entries with Plotly's 10px gaps outgrows the rows counted here and scrolls, its last agents hidden */
    layout.legend = {orientation: "h", x: 0, xanchor: "left", y: -55 / axis, yanchor: "top", tracegroupgap: 0};
    return layout;
  }
  function axes(title, traces) {
    const y = {title: {text: title}, type: state.logy ? "log" : "linear"};
    const means = (traces || []).filter(t => !t.fill).flatMap(t => t.y).filter(v => v !== null && v > 0);
    if (state.logy && means.length) {  /* a band that reaches down to 0 would stretch the log axis: start at the curves */
      const highs = (traces || []).flatMap(t => t.y).filter(v => v !== null && v > 0);
      y.range = [Math.log10(Math.min(...means) / 2), Math.log10(Math.max(...highs) * 1.2)];
    }
    return {xaxis: {title: {text: "round t"}, type: state.logx ? "log" : "linear"}, yaxis: y,
      hovermode: "closest"};
  }
  function drawBoard() {
    const b = boardById[document.getElementById("board-select").value];
    const head = document.getElementById("board-head");
    head.replaceChildren(el("h3", {text: b.title}),
      el("p", {text: `${seeds(b.seeds)}, T = ${horizon(b.horizon)}, privacy model ${b.model}` + (b.model === "none" ? "" : `, epsilon ${eps(b.epsilon)}, delta ${b.delta}`) + `; ${b.rows.length} agents (the non-private ones join every board of their env)`}),
      commands(b.sources));
    const best = b.rows.find(r => r.agent === b.best_private), pub = b.rows.find(r => r.agent === b.best_public);
    const line = document.getElementById("best-private");
    line.replaceChildren(best ? el("span", {}, el("strong", {text: "Best private: "}), `${best.agent}, ${interval(best.mean, best.low, best.high)}`, best.flag ? " " : "", mark(best.flag),
      pub ? `; best non-private: ${pub.agent}, ${interval(pub.mean, pub.low, pub.high)}; paired difference ${paired(best.vs_public) || "none (no shared seeds)"}` : "") : "No private agent on this board.");
    const rows = b.rows.filter(r => !state.privateOnly || r.model !== "none" || r.agent === D.uniform);
    const traces = rows.filter(r => r.curve !== null).flatMap(r => curveTraces(r.curve, r.agent + (challengers.has(r.agent) ? " (challenger)" : "") + (r.flag ? ` (${r.flag})` : ""), colour(r.agent),
      {group: r.agent, meta: r.agent, dash: r.agent === D.uniform ? "dot" : r.model === "none" ? "dash" : "solid",
       width: r.agent === b.best_private || challengers.has(r.agent) ? 3.5 : 2}));
    Plotly.react("board-plot", traces, belowLegend(axes("cumulative regret", traces), traces, "board-plot", 460), CONFIG);
    document.getElementById("board-table").replaceChildren(sortable("board-rows", rowColumns(false), rows.map(r => Object.assign({board: b}, r)), boardOrder));
  }
  function showBoard(id) { document.getElementById("board-select").value = id; drawBoard(); }
  function toggle(id, key, redraw) {
    return el("button", {id, type: "button", "aria-pressed": String(state[key]), onclick: e => {
      state[key] = !state[key]; e.target.setAttribute("aria-pressed", String(state[key])); redraw();
    }}, id.replace("board-", "").replace("log", "log ").replace("-", " "));
  }
  function boardSection() {
    const options = D.boards.map(b => el("option", {value: b.id, text: b.title}));
    return el("section", {id: "board"}, el("h2", {text: "Regret over time, one board at a time"}),
      el("p", {class: "note", text: "A board is one env, horizon, privacy model and epsilon, as the leaderboard groups them: its private agents and every non-private agent of the env (dashed; uniform play dotted; the best private agent and a challenger drawn thick). Click a legend entry to hide or show an agent, double-click to show it alone."}),
      el("label", {}, "Board ", el("select", {id: "board-select", onchange: drawBoard}, ...options)),
      el("div", {id: "board-head"}), el("p", {id: "best-private", class: "best"}),
      el("div", {class: "controls"}, toggle("board-logx", "logx", drawBoard), toggle("board-logy", "logy", drawBoard),
        el("label", {}, el("input", {type: "checkbox", id: "private-only", onchange: e => { state.privateOnly = e.target.checked; drawBoard(); }}), " private agents only (and uniform play)")),
      el("div", {id: "board-plot", class: "plot"}), el("div", {id: "board-table"}));
  }

  /* ---- price of privacy ---- */
  const priceById = Object.fromEntries(D.price.map(p => [p.id, p]));
  function priceGroup() { return priceById[document.getElementById("price-select").value]; }
  function drawPrice() {
    const p = priceGroup();
    document.getElementById("price-head").replaceChildren(el("h3", {text: p.title}), commands(p.sources));
    const slider = document.getElementById("eps-slider");
    slider.max = String(p.epsilons.length - 1);
    if (Number(slider.value) > p.epsilons.length - 1) slider.value = String(p.epsilons.length - 1);
    const traces = [], seen = new Set(), xs = p.epsilons;
    p.agents.forEach(a => {
      traces.push({x: a.points.map(q => q.epsilon), y: a.points.map(q => q.mean), name: a.agent, type: "scatter", mode: "lines+markers", meta: a.agent,
        line: {color: colour(a.agent)}, error_y: {type: "data", symmetric: false, array: a.points.map(q => q.high === null ? 0 : q.high - q.mean), arrayminus: a.points.map(q => q.low === null ? 0 : q.mean - q.low)},
        text: a.points.map(q => q.flag), hovertemplate: `${a.agent}<br>epsilon=%{x}<br>final regret=%{y:.4g}<br>%{text}<extra></extra>`});
      const c = a.counterpart;
      if (c && !seen.has(c.agent)) {
        seen.add(c.agent);
        traces.push({x: [xs[0] / 1.5, xs[xs.length - 1] * 1.5], y: [c.mean, c.mean], name: `${c.agent} (non-private)`, type: "scatter", mode: "lines", meta: c.agent,
          line: {color: colour(c.agent), dash: "dash"}, hovertemplate: `${c.agent}: ${interval(c.mean, c.low, c.high)}<extra></extra>`});
      }
    });
    const layout = {xaxis: {title: {text: "epsilon"}, type: "log", tickvals: xs, ticktext: xs.map(fmt)},  /* "0.3", not a log axis's "3" */ yaxis: {title: {text: `final regret at T = ${p.horizon}`}, type: state.logy ? "log" : "linear"},
      shapes: []};
    Plotly.react("price-eps-plot", traces, belowLegend(layout, traces, "price-eps-plot", 360), CONFIG);
    drawPriceCurves();
  }
  function drawPriceCurves() {
    const p = priceGroup(), e = p.epsilons[Number(document.getElementById("eps-slider").value)];
    document.getElementById("eps-value").textContent = `epsilon = ${fmt(e)}`;
    Plotly.relayout("price-eps-plot", {shapes: [{type: "line", xref: "x", yref: "paper", x0: e, x1: e, y0: 0, y1: 1, line: {color: "#444", width: 1, dash: "dot"}}]});
    const traces = [], seen = new Set();
    p.agents.forEach(a => {
      const q = a.points.find(q => q.epsilon === e);
      if (q && q.curve !== null) traces.push(...curveTraces(q.curve, `${a.agent} at epsilon ${fmt(e)}` + (q.flag ? ` (${q.flag})` : ""), colour(a.agent), {group: a.agent, meta: a.agent}));
      const c = a.counterpart;
      if (c && c.curve !== null && !seen.has(c.agent)) { seen.add(c.agent); traces.push(...curveTraces(c.curve, `${c.agent} (non-private)`, colour(c.agent), {group: c.agent, meta: c.agent, dash: "dash"})); }
    });
    Plotly.react("price-curves-plot", traces, belowLegend(axes("cumulative regret", traces), traces, "price-curves-plot", 420), CONFIG);
  }
  function priceSection() {
    if (!D.price.length) return null;
    return el("section", {id: "price"}, el("h2", {text: "The price of privacy"}),
      el("p", {class: "note", text: "Top: each private agent's final regret against epsilon (95% intervals), its non-private counterpart (its reference in the results, else the best non-private agent) dashed. Move the slider: below, the private agents' regret curves at that epsilon beside their counterparts' on the same rounds and seeds."}),
      el("label", {}, "Env, horizon and privacy model ", el("select", {id: "price-select", onchange: drawPrice}, ...D.price.map(p => el("option", {value: p.id, text: p.title})))),
      el("div", {id: "price-head"}), el("div", {id: "price-eps-plot", class: "plot"}),
      el("div", {class: "controls"}, el("label", {for: "eps-slider", text: "epsilon "}), el("input", {type: "range", id: "eps-slider", min: 0, max: 0, step: 1, value: 0, oninput: drawPriceCurves}), el("output", {id: "eps-value"})),
      el("div", {id: "price-curves-plot", class: "plot"}));
  }

  /* ---- leaderboard ---- */
  function leaderboardSection() {
    const all = D.boards.flatMap(b => b.rows.map(r => Object.assign({board: b}, r)));
    const holder = el("div", {id: "leaderboard-table"});
    const filter = {text: "", privateOnly: false}, order = {col: -1, dir: 1};
    function redraw() {
      const rows = all.filter(r => (!filter.privateOnly || r.model !== "none") && (!filter.text || `${r.board.title} ${r.agent}`.includes(filter.text)));
      holder.replaceChildren(sortable("leaderboard", rowColumns(true), rows, order));
    }
    redraw();
    return el("section", {id: "leaderboard-section"}, el("h2", {text: "Leaderboard"}),
      el("p", {class: "note", text: "Every board's agents ranked by mean final regret (rank 1 lowest). Click a column to sort, a board to draw it."}),
      commands(D.sources.map((_, i) => i)),
      el("div", {class: "controls"}, el("label", {}, "Filter ", el("input", {type: "search", id: "lb-filter", placeholder: "env or agent", oninput: e => { filter.text = e.target.value; redraw(); }})),
        el("label", {}, el("input", {type: "checkbox", id: "lb-private-only", onchange: e => { filter.privateOnly = e.target.checked; redraw(); }}), " private agents only")),
      holder);
  }

  /* ---- challengers ---- */
  function challengerSection() {
    if (!D.comparisons.length) return null;
    const box = el("section", {id: "challenger"}, el("h2", {text: "Challenger: paired comparisons"}));
    D.comparisons.forEach(c => {
      box.append(el("h3", {text: `${c.challenger} against the baselines` + (c.reference ? ` (reference ${c.reference})` : "")}), commands([c.source]),
        sortable(`compare-${c.source}`, [
          {label: "board", value: r => `${r.env} ${r.horizon} ${r.epsilon}`, cell: r => `${r.env}, T=${r.horizon}` + (r.epsilon === null ? "" : `, eps=${fmt(r.epsilon)}`)},
          {label: "baseline", value: r => r.baseline, cell: r => `${r.baseline}` + (r.reference ? " (reference)" : "")},
          {label: "privacy", value: r => r.model, cell: r => r.model},
          {label: "challenger minus baseline [95% CI]", num: true, value: r => r.diff[0], cell: r => interval(...r.diff)},
          {label: "wins", num: true, value: r => r.wins / r.n_seeds, cell: r => `${r.wins}/${r.n_seeds}`},
          {label: "ratio", num: true, value: r => r.ratio, cell: r => fmt(r.ratio)},
          {label: "verdict", value: r => r.verdict, cell: r => r.verdict},
        ], c.rows.slice()));
    });
    return box;
  }

  const nav = el("nav", {}, el("a", {href: "#sources", text: "What ran"}), el("a", {href: "#board", text: "Boards"}), D.price.length ? el("a", {href: "#price", text: "Price of privacy"}) : null,
    el("a", {href: "#leaderboard-section", text: "Leaderboard"}), D.comparisons.length ? el("a", {href: "#challenger", text: "Challenger"}) : null);
  document.body.append(nav, header(), boardSection(), priceSection() || "", challengerSection() || "", leaderboardSection());
  drawBoard();
  if (D.price.length) {  /* open on the group with the most epsilons: the slider has the most to show */
    const most = D.price.reduce((a, p) => p.epsilons.length > a.epsilons.length ? p : a, D.price[0]);
    document.getElementById("price-select").value = most.id;
    drawPrice();
  }
  document.body.setAttribute("data-ready", "true");
})();
