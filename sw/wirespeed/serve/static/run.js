"use strict";
// A run's page: GET /api/runs/{id} for its header and figures; while it runs, its events
// (GET /api/runs/{id}/events, server-sent, replayed from the first on every connection) fill the
// trials, the charts and the progress; a finished run's trials come from its trials.jsonl.
// Stop and Resume are POST /api/runs/{id}/stop and /resume.

const runId = document.body.dataset.run;
const base = `/api/runs/${encodeURIComponent(runId)}`;
// trials: the earlier ones of a resumed run (from trials.jsonl), then those of the event stream
const state = { earlier: [], trials: [], estimate: null, startedAt: null, stream: null, sizes: [], notes: [],
                live: false };

function allTrials() { return state.earlier.concat(state.trials); }

function lineShare(result) {
  const row = result.offered_fps && state.lineRates ? state.lineRates[`${result.frame_size}`] : null;
  return row ? (100 * result.offered_fps) / row : null;
}

function renderTrials() {
  const body = document.querySelector("#trials tbody");
  const trials = allTrials();
  body.replaceChildren(...trials.map((t, i) => {
    const r = t.result, latency = r.latency;
    const share = lineShare(r);
    return ws.el("tr", { class: r.passed ? "pass" : "fail" },
      ws.el("td", { class: "num" }, i + 1), ws.el("td", {}, t.test), ws.el("td", { class: "num" }, t.size),
ws.el("td", { class: "num" }, ws.number(r.offered_fps)),
      ws.el("td", { class: "num" }, share === null ? "" : ws.number(share, 2)),
      ws.el("td", { class: "num" }, ws.number(r.tx_frames)), ws.el("td", { class: "num" }, ws.number(r.rx_frames)),
      ws.el("td", { class: "num" }, ws.number(r.loss_pct, 3)),
      ws.el("td", { class: "num" }, latency ? ws.number(latency.avg_ns / 1000, 3) : ""),
      ws.el("td", {}, r.passed ? "pass" : (r.failure || "fail")));
  }));
  const rate = trials.map((t, i) => [i + 1, t.result.offered_fps]);
  const received = trials.map((t, i) => [i + 1, t.result.measured_rx_fps]);
  ws.chart(document.getElementById("chart-rate"), { series: [{ name: "offered", points: rate },
    { name: "received", points: received }], xLabel: "trial", wholeX: true });
  const withLatency = trials.map((t, i) => [i + 1, t.result.latency]).filter(([, l]) => l);
  ws.chart(document.getElementById("chart-latency"), {
    series: [{ name: "mean", points: withLatency.map(([i, l]) => [i, l.avg_ns / 1000]) }],
    bars: withLatency.map(([i, l]) => [i, l.min_ns / 1000, l.max_ns / 1000]), xLabel: "trial", wholeX: true });
  const last = [...trials].reverse().find((t) => t.result.timeline && t.result.timeline.length);
  const timeline = last ? last.result.timeline : [];
  document.getElementById("chart-timeline").closest("figure").hidden = !last;
  ws.chart(document.getElementById("chart-timeline"), {
    series: [{ name: "sent", points: timeline.map((s) => [s[0] / 1e6, s[1]]) },
      { name: "received", points: timeline.map((s) => [s[0] / 1e6, s[2]]) }],
    xLabel: last ? `ms since the start of trial ${trials.indexOf(last) + 1}` : "ms" });
  renderProgress();
}

function renderProgress() {
  const box = document.getElementById("progress");
  if (!state.estimate || !state.live) { box.hidden = true; return; }
  const done = state.trials.length, expected = Math.max(state.estimate.trials, done);
  const elapsed = state.startedAt ? (Date.now() - state.startedAt) / 1000 : 0;
  const left = done > 0 ? (elapsed / done) * (expected - done) : state.estimate.wall_s;
  document.getElementById("progress-bar").value = expected ? done / expected : 0;
  document.getElementById("progress-text").textContent =
    `${done} of about ${expected} trials, ${ws.seconds(elapsed)} so far, about ${ws.seconds(left)} left`;
  box.hidden = false;
}

function setStatus(status) {
  const box = document.getElementById("status");
  if (box) {
    box.textContent = status;
    box.className = `status ${status}`;
  }
}

function renderSizes() {
  document.getElementById("sizes").replaceChildren(...state.sizes.map((line) => ws.el("p", { class: "size-done" }, line)));
  const notes = document.getElementById("notes");
  notes.replaceChildren(...state.notes.map((n) => ws.el("li", {}, n)));
  document.getElementById("notes-card").hidden = !state.notes.length;
}

async function renderRun() {
  const run = await ws.api("GET", base);
  const dut = run.dut || {};
  document.getElementById("heading").textContent = run.title || `Run ${runId}`;
  const status = run.state && run.live ? run.state : run.status;
  ws.dl(document.getElementById("run-facts"), [
    ["Run", runId], ["Status", ws.el("span", { class: `status ${status}`, id: "status" }, status)],
    ["Tests", (run.tests || []).join(", ")], ["Target", run.target],
    ["DUT", dut.spec || dut.description || ""], ["Started (UTC)", run.started], ["Updated (UTC)", run.updated],
    ["Error", run.error], ["Warning", run.warning],
    ["Verdict", run.passed === null || run.passed === undefined ? "" : run.passed ? "pass" : "fail"],
  ]);
  state.live = Boolean(run.live);
  document.getElementById("stop").hidden = !state.live;
  document.getElementById("resume").hidden = state.live || !["interrupted", "failed"].includes(run.status);
  const headline = document.getElementById("headline");
  headline.replaceChildren(...(run.headline || []).map((table) => ws.el("table", { class: "list" },
    ws.el("caption", {}, table.title),
    ws.el("thead", {}, ws.el("tr", {}, table.columns.map((c) => ws.el("th", {}, c)))),
    ws.el("tbody", {}, table.rows.map((row) => ws.el("tr", {}, row.map((v) => ws.el("td", {}, v))))))));
  await renderFiles();
  return run;
}

async function renderFiles() {
  let files = [];
  try { files = await ws.api("GET", `${base}/files`); } catch (error) { return; }
  const names = files.map((f) => f.name);
  const list = document.getElementById("files");
  const link = (href, text) => ws.el("li", {}, ws.el("a", { href, target: "_blank", rel: "noopener" }, text));
  list.replaceChildren(
    ...(names.includes("report.html") ? [link(`${base}/files/report.html`, "Report (HTML)"),
      link(`${base}/report.pdf`, "Report (PDF)")] : []),
    ...names.filter((n) => !n.includes("/") && n !== "report.html").map((n) => link(`${base}/files/${encodeURIComponent(n)}`, n)),
    link(`${base}/zip`, "Everything (zip)"));
  document.getElementById("files-card").hidden = !files.length;
}

// The first ``count`` trials of trials.jsonl (all when null): a line is written whole, once its trial is done.
async function recordedTrials(count) {
  let text = "";
  try { text = await ws.api("GET", `${base}/files/trials.jsonl`); } catch (error) { return []; }
  const lines = String(text).split("\n").slice(0, -1);      // the last is empty, or a line being written
  return lines.slice(0, count === null ? lines.length : count).map((line) => {
    const r = JSON.parse(line);
    return { test: r.test, size: r.frame_size, result: r };
  });
}

function onEvent(event) {
  switch (event.kind) {
    case "run_started":
      setStatus("running");
      state.estimate = event.estimate;
      state.startedAt = Date.parse(event.utc);
      if (event.recorded_trials) {
        recordedTrials(event.recorded_trials).then((earlier) => { state.earlier = earlier; renderTrials(); });
      }
      break;
    case "note": state.notes.push(event.text); renderSizes(); break;
    case "size_started":
      state.lineRates = state.lineRates || {};
      state.lineRates[`${event.frame_size}`] = event.line_rate_fps;
      break;
    case "trial_done":
      state.trials.push({ test: event.test, size: event.frame_size, result: event.result });
      renderTrials();
      break;
    case "size_done":
      if (event.summary) { state.sizes.push(`${event.test} ${event.frame_size}: ${event.summary}`); renderSizes(); }
      break;
    case "run_done":
      if (event.error) ws.showError(new Error(event.error));
      break;
    default: break;
  }
}

function follow() {
  if (state.stream) state.stream.close();
  const stream = new EventSource(`${base}/events`);
  state.stream = stream;
  stream.onopen = () => {
    // every connection replays the run's events from the first
    state.earlier = [];
    state.trials = [];
    state.sizes = [];
    state.notes = [];
  };
  stream.onmessage = (message) => onEvent(JSON.parse(message.data));
  // the server's last word, after the report is written and the tester released (run_done
  // comes before both): the page then shows the run as it stays
  stream.addEventListener("released", () => {
    stream.close();
    state.stream = null;
    state.live = false;
    refresh();
  });
  stream.onerror = () => { if (stream.readyState === EventSource.CLOSED) state.stream = null; };
}

async function refresh() {
  try {
    const run = await renderRun();
    renderTrials();
    return run;
  } catch (error) {
    ws.showError(error);
    return null;
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("stop").addEventListener("click", async (event) => {
    event.target.disabled = true;
    event.target.textContent = "Stopping after this trial…";
    try { await ws.api("POST", `${base}/stop`); } catch (error) { ws.showError(error); }
  });
  document.getElementById("resume").addEventListener("click", async (event) => {
    ws.showError(null);
    try {
      await ws.api("POST", `${base}/resume`);
      event.target.hidden = true;
      await renderRun();
      follow();
    } catch (error) { ws.showError(error); }
  });
  const run = await refresh();
  if (!run) return;
  if (run.live) {
    follow();
  } else {
    state.trials = await recordedTrials(null);
    renderTrials();
  }
});
