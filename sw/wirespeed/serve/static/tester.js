"use strict";
// The Tester page: GET /api/tester, GET /api/dut-models.

function hex(value) {
  return value === undefined || value === null ? "" : "0x" + Number(value).toString(16);
}

function versionText(v) {
  return v === undefined || v === null ? "" : `${(v >> 16) & 255}.${(v >> 8) & 255}.${v & 255}`;
}

async function showTester() {
  const t = await ws.api("GET", "/api/tester");
  const id = t.identification || {};
  const dut = t.dut || {};
  ws.dl(document.getElementById("tester"), [
    ["Target", t.target === "sim" ? "sim (the Verilator simulation of the gateware)" : `${t.target} (a board)`],
    ["State", t.busy ? ws.el("a", { href: `/runs/${encodeURIComponent(t.busy)}` }, `running run ${t.busy}`) : "idle"],
    ["Gateware version", versionText(id.version)],
    ["Register map hash", hex(id.map_hash)],
    ["Ports", id.n_ports],
    ["Clock", id.clk_hz ? `${ws.number(id.clk_hz / 1e6, 3)} MHz` : ""],
    ["Identified", t.identified_by_run ?
      ws.el("span", {}, `${t.identified_utc} by `,
        ws.el("a", { href: `/runs/${encodeURIComponent(t.identified_by_run)}` }, `run ${t.identified_by_run}`)) :
      t.identified_utc ? `${t.identified_utc} (Identify now)` : "not yet: a run or Identify now reads it"],
    ["Link", "not reported: the gateware has no link-status register"],
    ["Default DUT", dut.error ? `error: ${dut.error}` : (dut.spec || dut.description || "")],
    ["wirespeed", t.version],
  ]);
  const cal = document.getElementById("calibration");
  if (t.calibration) {
    cal.replaceChildren(ws.el("pre", {}, JSON.stringify(t.calibration, null, 2)));
  } else {
    cal.textContent = "No run on this tester has recorded a calibration yet (a run's calibration: auto measures it).";
  }
  return t;
}

async function showModels() {
  const catalog = await ws.api("GET", "/api/dut-models");
  const box = document.getElementById("models");
  for (const model of catalog.models) {
    const rows = model.parameters.map((p) => ws.el("tr", {},
      ws.el("td", {}, ws.el("code", {}, p.name)), ws.el("td", {}, p.default), ws.el("td", {}, p.allowed),
      ws.el("td", {}, p.meaning)));
    box.append(ws.el("details", { "data-model": model.name },
      ws.el("summary", {}, ws.el("strong", {}, model.name), " — ", model.description),
      ws.el("table", { class: "list" },
        ws.el("thead", {}, ws.el("tr", {}, ["Parameter", "Default", "Allowed", "Meaning"].map((h) => ws.el("th", {}, h)))),
        ws.el("tbody", {}, rows))));
  }
  if (catalog.profiles && catalog.profiles.length) {
    box.append(ws.el("h3", {}, "DUT profiles from the labs"),
      ws.el("ul", {}, catalog.profiles.map((p) => ws.el("li", {}, ws.el("code", {}, p.spec), " — ", p.title))));
  }
  document.getElementById("models-card").hidden = false;
}

async function identify(event) {
  const status = document.getElementById("identify-status");
  event.target.disabled = true;
  status.textContent = "connecting (a simulation not built yet is built first: minutes)…";
  ws.showError(null);
  try {
    await ws.api("POST", "/api/tester/identify");
    status.textContent = "";
    await showTester();
  } catch (error) {
    status.textContent = "";
    ws.showError(error);
  }
  event.target.disabled = false;
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("identify").addEventListener("click", identify);
  try {
    const t = await showTester();
    if (t.target === "sim") await showModels();
  } catch (error) {
    ws.showError(error);
  }
});
