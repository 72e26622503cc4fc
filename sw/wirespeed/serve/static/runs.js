"use strict";
// The Runs page: GET /api/runs (the index), each run's headline and verdict (GET /api/runs/{id}),
// its files, Compare (GET /api/compare?runs=...) and Delete (DELETE /api/runs/{id}, confirmed).

function headlineText(run) {
  const table = (run.headline || [])[0];
  if (!table) return "";
  const rows = table.rows.slice(0, 4).map((row) => `${row[0]}: ${row[1]}`);
  return `${table.title}: ${rows.join("; ")}${table.rows.length > 4 ? "; …" : ""}`;
}

function selected() {
  return [...document.querySelectorAll("#runs tbody input[type=checkbox]:checked")].map((box) => box.value);
}

async function details(row, id) {
  try {
    const run = await ws.api("GET", `/api/runs/${encodeURIComponent(id)}`);
    row.querySelector(".headline").textContent = headlineText(run);
    row.querySelector(".verdict").textContent = run.passed === null || run.passed === undefined ? "" :
      run.passed ? "pass" : "fail";
  } catch (error) {
    row.querySelector(".headline").textContent = error.message;
  }
}

async function remove(id, row) {
  if (!window.confirm(`Delete run ${id} and every file of it? This cannot be undone.`)) return;
  try {
    await ws.api("DELETE", `/api/runs/${encodeURIComponent(id)}`);
    row.remove();
    ws.showError(null);
  } catch (error) {
    ws.showError(error);
  }
}

async function show() {
  const runs = await ws.api("GET", "/api/runs");
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  document.getElementById("no-runs").hidden = runs.length > 0;
  for (const run of runs) {
    const id = run.id, base = `/api/runs/${encodeURIComponent(id)}`;
    const file = (name, text) => ws.el("a", { href: `${base}/files/${name}`, target: "_blank", rel: "noopener" }, text);
    const row = ws.el("tr", { "data-run": id },
      ws.el("td", {}, ws.el("input", { type: "checkbox", value: id, "aria-label": `select ${id}` })),
      ws.el("td", {}, (run.started || "").replace("T", " ").replace(/\+00:00$/, "")),
      ws.el("td", {}, ws.el("a", { href: `/runs/${encodeURIComponent(id)}` }, run.title || id)),
      ws.el("td", {}, run.target), ws.el("td", {}, run.dut || ""), ws.el("td", {}, (run.tests || "").replaceAll(",", ", ")),
      ws.el("td", {}, ws.el("span", { class: `status ${run.status}` }, run.status)),
      ws.el("td", { class: "headline" }), ws.el("td", { class: "verdict" }),
      ws.el("td", { class: "links" }, file("report.html", "report"), " ",
        ws.el("a", { href: `${base}/report.pdf`, target: "_blank", rel: "noopener" }, "PDF"), " ",
        file("Throughput.csv", "CSV"), " ", file("results.json", "JSON"), " ", ws.el("a", { href: `${base}/zip` }, "zip")),
      ws.el("td", {}, ws.el("button", { type: "button", class: "delete" }, "Delete")));
    row.querySelector(".delete").addEventListener("click", () => remove(id, row));
    body.append(row);
    details(row, id);
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  const compare = document.getElementById("compare");
  document.getElementById("runs").addEventListener("change", () => { compare.disabled = selected().length < 2; });
  compare.addEventListener("click", () => {
    const query = selected().map((id) => `runs=${encodeURIComponent(id)}`).join("&");
    window.open(`/api/compare?${query}`, "_blank", "noopener");
  });
  try { await show(); } catch (error) { ws.showError(error); }
});
