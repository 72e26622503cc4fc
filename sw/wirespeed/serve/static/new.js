"use strict";
// The New test page: a form made from GET /api/plan-options (the command line's own options),
// profiles (GET/PUT /api/profiles), the estimate (POST /api/estimate) and Start (POST /api/runs).
// A value left empty is not sent: the plan then takes the command line's default.

const OPEN_GROUPS = new Set(["Plan", "Output"]);
let options = [];
let estimateTimer = null;

function field(option, simulation, catalog) {
  const id = `opt-${option.key}`;
  const help = ws.el("small", { class: "help" }, option.help);
  const error = ws.el("span", { class: "field-error", role: "alert" });
  let input;
  if (option.key === "tests") {
    input = ws.el("span", { class: "choices", id },
      pageState.tests.map((test) => ws.el("label", { title: test.title },
        ws.el("input", { type: "checkbox", name: "tests", value: test.name, checked: test.name === option.default }), " ",
        test.name)));
  } else if (option.kind === "flag") {
    input = ws.el("input", { type: "checkbox", id, name: option.key, checked: option.default === true });
  } else if (option.kind === "many") {
    input = ws.el("textarea", { id, name: option.key, rows: 2, placeholder: `${option.metavar}, one per line` });
  } else {
    const fallback = option.key === "dut" && pageState.dut ? pageState.dut : option.metavar;
    const placeholder = option.default !== null && option.default !== "" ? String(option.default) : fallback;
    input = ws.el("input", { type: "text", id, name: option.key, placeholder, spellcheck: "false" });
  }
  const wrapper = ws.el("div", { class: "field", "data-key": option.key },
    ws.el("label", { for: id }, option.key), input, help, error);
  if (option.key === "dut" && simulation && catalog) wrapper.append(dutPicker(input, catalog));
  return wrapper;
}

// Builds MODEL:KEY=VALUE,... from a model and its parameters (the limits shown as the command
// line states them); the text field stays the value sent, and can be edited by hand.
function dutPicker(text, catalog) {
  const select = ws.el("select", { id: "dut-model", "aria-label": "DUT model" },
    ws.el("option", { value: "" }, "(the server's DUT)"),
    catalog.models.map((m) => ws.el("option", { value: m.name }, m.name)),
    (catalog.profiles || []).map((p) => ws.el("option", { value: `profile:${p.name}` }, `lab: ${p.name}`)));
  const params = ws.el("div", { class: "dut-params" });
  const compose = () => {
    const model = select.value;
    if (!model || model.startsWith("profile:")) return;
    const parts = [];
    for (const input of params.querySelectorAll("input")) {
      if (input.value.trim()) parts.push(`${input.name}=${input.value.trim()}`);
    }
    text.value = parts.length ? `${model}:${parts.join(",")}` : model;
    scheduleEstimate();
  };
  select.addEventListener("change", () => {
    params.replaceChildren();
    if (select.value.startsWith("profile:")) {
      const profile = catalog.profiles.find((p) => `profile:${p.name}` === select.value);
      text.value = profile.spec;
      scheduleEstimate();
      return;
    }
    const model = catalog.models.find((m) => m.name === select.value);
    if (!model) { text.value = ""; scheduleEstimate(); return; }
    for (const p of model.parameters) {
      params.append(ws.el("label", { title: `${p.meaning}. Allowed: ${p.allowed}` }, p.name,
        ws.el("input", { name: p.name, placeholder: p.default, "data-allowed": p.allowed, oninput: compose })));
    }
    compose();
  });
  return ws.el("div", { class: "dut-picker" }, select, params);
}

const pageState = { tests: [] };

function values() {
  const out = {};
  for (const option of options) {
    const box = document.querySelector(`.field[data-key="${option.key}"]`);
    if (option.key === "tests") {
      const checked = [...box.querySelectorAll("input:checked")].map((i) => i.value);
      if (checked.length) out.tests = checked;
    } else if (option.kind === "flag") {
      const on = box.querySelector("input").checked;
      if (on !== (option.default === true)) out[option.key] = on;
    } else if (option.kind === "many") {
      const lines = box.querySelector("textarea").value.split("\n").map((l) => l.trim()).filter(Boolean);
      if (lines.length) out[option.key] = lines;
    } else {
      const text = box.querySelector("input").value.trim();
      if (text) out[option.key] = text;
    }
  }
  return out;
}

function fill(given) {
  // a config file's keys, at the top or in its [rfc2544] table
  const flat = { ...given, ...(given.rfc2544 || {}) };
  for (const option of options) {
    const box = document.querySelector(`.field[data-key="${option.key}"]`);
    const value = flat[option.key];
    if (option.key === "tests") {
      const names = value === undefined ? [option.default] : Array.isArray(value) ? value : String(value).split(",");
      for (const input of box.querySelectorAll("input")) input.checked = names.map((n) => n.trim()).includes(input.value);
    } else if (option.kind === "flag") {
      box.querySelector("input").checked = value === undefined ? option.default === true : Boolean(value);
    } else if (option.kind === "many") {
      box.querySelector("textarea").value = value === undefined ? "" : [].concat(value).join("\n");
    } else {
      box.querySelector("input").value = value === undefined ? "" : [].concat(value).join(",");
    }
  }
  scheduleEstimate();
}

function clearFieldErrors() {
  for (const box of document.querySelectorAll(".field.invalid")) box.classList.remove("invalid");
  for (const span of document.querySelectorAll(".field-error")) span.textContent = "";
  ws.showError(null);
}

// Shows an API error at its field (the key the API names, e.g. sizes or rfc2544.sizes).
function showFieldError(error) {
  ws.showError(error);
  const name = error.data && error.data.field ? String(error.data.field) : "";
  const key = name.replace(/^rfc2544\./, "").replace(/^--/, "").replace(/^values\./, "");
  const box = document.querySelector(`.field[data-key="${CSS.escape(key)}"]`);
  if (box) {
    box.classList.add("invalid");
    box.querySelector(".field-error").textContent = error.data.message;
    const details = box.closest("details");
    if (details) details.open = true;
    box.scrollIntoView({ block: "center" });
  }
}

function scheduleEstimate() {
  clearTimeout(estimateTimer);
  estimateTimer = setTimeout(estimate, 500);
}

async function estimate() {
  const box = document.getElementById("estimate");
  try {
    const e = await ws.api("POST", "/api/estimate", { values: values() });
    const wall = e.wall_s === null ? "the time it takes is measured when the run starts (no run on this server has " +
      "measured the simulation's pace yet)" : `about ${ws.seconds(e.wall_s)}` +
      (e.pace_from ? ` (at the pace of run ${e.pace_from})` : "");
    box.replaceChildren(ws.el("strong", {}, `Estimate: ${e.trials} trials`),
      ` (at most ${e.most_trials}), ${ws.number(e.wire_s, 2)} s on the wire; ${wall}. `,
      ws.el("span", { class: "muted" }, e.basis));
    box.classList.remove("stale");
  } catch (error) {
    box.replaceChildren(ws.el("span", { class: "muted" }, `No estimate: ${error.message}`));
    box.classList.add("stale");
  }
}

async function loadProfiles(selected) {
  const select = document.getElementById("profile");
  const names = await ws.api("GET", "/api/profiles");
  select.replaceChildren(ws.el("option", { value: "" }, "(none)"),
    ...names.map((p) => ws.el("option", { value: p.name, selected: p.name === selected }, p.name)));
}

async function start(event) {
  event.preventDefault();
  clearFieldErrors();
  const button = document.getElementById("start");
  button.disabled = true;
  try {
    const run = await ws.api("POST", "/api/runs", { values: values() });
    window.location.assign(`/runs/${encodeURIComponent(run.id)}`);
  } catch (error) {
    if (error.status === 409 && error.data && error.data.run) {
      ws.showError(error);
      document.getElementById("error").append(" ",
        ws.el("a", { href: `/runs/${encodeURIComponent(error.data.run)}` }, "Open that run"));
    } else {
      showFieldError(error);
    }
    button.disabled = false;
  }
}

document.addEventListener("DOMContentLoaded", async () => {
  try {
    const listing = await ws.api("GET", "/api/plan-options");
    options = listing.options;
    pageState.tests = listing.tests;
    pageState.dut = listing.dut;
    const catalog = listing.simulation ? await ws.api("GET", "/api/dut-models") : null;
    const groups = new Map();
    for (const option of options) {
      if (!listing.simulation && (option.group === "Simulation" || option.key === "dut")) continue;
      if (!groups.has(option.group)) groups.set(option.group, []);
      groups.get(option.group).push(field(option, listing.simulation, catalog));
    }
    const shown = new Set([...groups.values()].flat().map((f) => f.dataset.key));
    options = options.filter((o) => shown.has(o.key));
    const form = document.getElementById("form-fields");
    for (const [group, fields] of groups) {
      form.append(ws.el("details", { open: OPEN_GROUPS.has(group), "data-group": group },
        ws.el("summary", {}, group), ws.el("div", { class: "fields" }, fields)));
    }
    document.getElementById("plan").addEventListener("submit", start);
    document.getElementById("plan").addEventListener("change", scheduleEstimate);
    document.getElementById("estimate-button").addEventListener("click", estimate);
    document.getElementById("load-profile").addEventListener("click", async () => {
      clearFieldErrors();
      const name = document.getElementById("profile").value;
      if (!name) return;
      try {
        const profile = await ws.api("GET", `/api/profiles/${encodeURIComponent(name)}`);
        fill(profile.values);
        document.getElementById("profile-name").value = name;
        document.getElementById("profile-status").textContent = `loaded ${name}`;
      } catch (error) { ws.showError(error); }
    });
    document.getElementById("save-profile").addEventListener("click", async () => {
      clearFieldErrors();
      const name = document.getElementById("profile-name").value.trim();
      try {
        await ws.api("PUT", `/api/profiles/${encodeURIComponent(name)}`, { values: values() });
        await loadProfiles(name);
        document.getElementById("profile-status").textContent = `saved ${name}`;
      } catch (error) { showFieldError(error); }
    });
    await loadProfiles();
    const wanted = new URLSearchParams(window.location.search).get("profile");
    if (wanted) {
      document.getElementById("profile").value = wanted;
      document.getElementById("load-profile").click();
    } else {
      scheduleEstimate();
    }
  } catch (error) {
    ws.showError(error);
  }
});
