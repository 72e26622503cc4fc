"use strict";
// What every page uses: API calls with their one-line errors, and elements built from text.
// Text from the API (titles, profile names, errors) is always set as text, never parsed as markup.

const ws = {};

// An API call; rejects with an Error whose message is "field: message" as the API words it.
ws.api = async function (method, path, body) {
  const options = { method, headers: { Accept: "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const error = new Error(data && data.message ? `${data.field}: ${data.message}` : `HTTP ${response.status}`);
    error.status = response.status;
    error.data = data;
    throw error;
  }
  return data;
};

// An element: ws.el("td", {class: "num"}, "text", child, ...); strings become text nodes.
ws.el = function (tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

ws.showError = function (error) {
  const box = document.getElementById("error");
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  box.textContent = error.message || String(error);
  box.hidden = false;
};

ws.number = function (value, digits) {
  if (value === null || value === undefined || Number.isNaN(value)) return "";
  return Number(value).toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 0 : digits,
                                                  minimumFractionDigits: digits === undefined ? 0 : digits });
};

ws.seconds = function (s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return "unknown";
  s = Math.max(0, Math.round(s));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return h ? `${h} h ${m} min` : m ? `${m} min ${r} s` : `${r} s`;
};

ws.dl = function (list, facts) {
  list.replaceChildren();
  for (const [term, value] of facts) {
    if (value === undefined || value === null || value === "") continue;
    list.append(ws.el("dt", {}, term), ws.el("dd", {}, value));
  }
};
