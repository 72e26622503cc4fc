"use strict";
// Small SVG charts for the live run page: points joined by lines, optional min-max bars, linear
// axes with rounded ticks. Drawn again whole on each update (a run has at most a few hundred trials).

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#1f5fa8", "#d0641c", "#2b8a3e", "#8e44ad"];

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Round ticks from below lo to at or above hi; whole numbers only when ``whole``.
function ticks(lo, hi, count, whole) {
  if (!(hi > lo)) { hi = lo + 1; }
  const raw = (hi - lo) / count, power = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  if (whole) step = Math.max(1, Math.round(step));
  const out = [Number((Math.floor(lo / step) * step).toPrecision(12))];
  while (out[out.length - 1] < hi - step * 1e-9) out.push(Number((out[out.length - 1] + step).toPrecision(12)));
  return out;
}

function short(v) {
  const a = Math.abs(v);
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e3) return `${Number((v / 1e3).toPrecision(3))}k`;
  return String(Number(v.toPrecision(3)));
}

// chart(box, {series: [{name, points: [[x, y], ...]}], bars: [[x, lo, hi]], xLabel, yLabel})
ws.chart = function (box, spec) {
  const width = 460, height = 220, left = 52, right = 10, top = 10, bottom = 36;
  const all = spec.series.flatMap((s) => s.points).concat((spec.bars || []).flatMap(([x, lo, hi]) => [[x, lo], [x, hi]]));
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img" });
  if (!all.length) {
    root.append(svg("text", { x: width / 2, y: height / 2, "text-anchor": "middle", class: "empty" }, "no trial yet"));
    box.replaceChildren(root);
    return;
  }
  const xs = all.map((p) => p[0]), ys = all.map((p) => p[1]);
  const xt = ticks(Math.min(...xs), Math.max(...xs), 6, spec.wholeX), yt = ticks(Math.min(0, ...ys), Math.max(...ys), 5);
  const x0 = xt[0], x1 = xt[xt.length - 1] > x0 ? xt[xt.length - 1] : x0 + 1;
  const y0 = yt[0], y1 = yt[yt.length - 1] > y0 ? yt[yt.length - 1] : y0 + 1;
  const X = (x) => left + ((x - x0) / (x1 - x0)) * (width - left - right);
  const Y = (y) => height - bottom - ((y - y0) / (y1 - y0)) * (height - top - bottom);
  for (const t of yt) {
    root.append(svg("line", { x1: left, x2: width - right, y1: Y(t), y2: Y(t), class: "grid" }),
      svg("text", { x: left - 4, y: Y(t) + 4, "text-anchor": "end" }, short(t)));
  }
  for (const t of xt) root.append(svg("text", { x: X(t), y: height - bottom + 14, "text-anchor": "middle" }, short(t)));
  root.append(svg("text", { x: (left + width) / 2, y: height - 4, "text-anchor": "middle", class: "label" }, spec.xLabel || ""));
  for (const [x, lo, hi] of spec.bars || []) {
    root.append(svg("line", { x1: X(x), x2: X(x), y1: Y(lo), y2: Y(hi), class: "bar" }));
  }
  spec.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    if (s.points.length > 1) {
      root.append(svg("polyline", { points: s.points.map(([x, y]) => `${X(x)},${Y(y)}`).join(" "), fill: "none",
                                    stroke: color, "stroke-width": 1.5 }));
    }
    for (const [x, y] of s.points) root.append(svg("circle", { cx: X(x), cy: Y(y), r: 2.5, fill: color }));
    root.append(svg("text", { x: left + 8 + i * 120, y: top + 10, fill: color, class: "legend" }, s.name));
  });
  box.replaceChildren(root);
};
