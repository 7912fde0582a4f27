// The viewer's pictures, chosen by the data: a line over time, bars of a
// grouped count or sum, points on a map of San Francisco, or a choropleth
// of a count by analysis neighborhood, supervisor district, police district
// or ZIP code. Each is an <svg role="img"> whose aria-label says what it
// shows; nothing is loaded from the network (the areas' boundaries are
// bundled, see the sf_*.geojson files and testdata/SOURCES.md).
//
// chooseChart looks at a result's columns, its first rows and its query;
// the draw functions take the rows the viewer read for the picture and the
// width to draw at, and return {svg, note}. A map's marks carry their row's
// text (data-row), shown on hover (title) and on a click (viewer.js).
import neighborhoods from "./sf_analysis_neighborhoods.geojson";
import supervisorDistricts from "./sf_supervisor_districts.geojson";
import policeDistricts from "./sf_police_districts.geojson";
import zipCodes from "./sf_zip_codes.geojson";

const NS = "http://www.w3.org/2000/svg";

// Bounds of what the viewer reads for a picture.
export const CHART_MAX_GROUPS = 500; // rows of a grouped result drawn as a line, bars or areas
export const CHART_BARS = 50; // bars drawn (the largest)
export const MAP_MAX_POINTS = 2000; // points drawn (the result's first)

// ---- choosing -----------------------------------------------------------------------

const MEASURE = /^(count|sum|n|total)(_|$)|^(count|sum)/i;
const ISO_TIME = /^(\d{4})-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;
const TIME_TYPES = new Set(["calendar_date", "floating_timestamp", "fixed_timestamp", "date", "timestamp", "datetime"]);

// districtKey reads a supervisor district's number from 3, "3", "03", "3.0"
// or "District 3"; null when it names none.
function districtKey(v) {
  const m = /^(?:(?:supervisor(?:ial)?\s+)?district\s+)?0*(\d{1,2})(?:\.0*)?$/i.exec(String(v ?? "").trim());
  return m ? m[1] : null;
}

// nameKey matches a name case-insensitively ("Tenderloin", "TENDERLOIN").
function nameKey(v) {
  return typeof v === "string" ? v.trim().toLowerCase() : null;
}

// zipKey reads a ZIP code from 94110, "94110", "94110.0" or "94110-1234".
function zipKey(v) {
  const m = /^(\d{5})(?:\.0*|-\d{4})?$/.exec(String(v ?? "").trim());
  return m ? m[1] : null;
}

// titleCase writes "TENDERLOIN" as "Tenderloin".
function titleCase(s) {
  return s.toLowerCase().replace(/\b\w/g, (c) => c.toUpperCase());
}

// The area columns a choropleth is drawn for: the column names, the
// boundaries (features with the property "name") and how a group's value
// is matched to a feature's name. A set with "named" is chosen for a column
// of another name (a bare "district") when at least half of its values
// name one of its areas.
export const AREA_SETS = [
  { set: "analysis_neighborhood", column: /^(analysis_?neighborhoods?|neighborhoods?_analysis(_boundaries)?|analysis neighborhood)$/i,
    noun: "analysis neighborhood", features: neighborhoods.features, key: nameKey, title: (name) => name },
  { set: "supervisor_district", column: /^(supervisor_?districts?|supervisor district|sup_?dist(rict)?)$/i,
    noun: "supervisor district", features: supervisorDistricts.features, key: districtKey, title: (name) => `District ${name}` },
  { set: "police_district", column: /^(police_?districts?|police district|pd_?district)$/i, named: /^district$/i,
    noun: "police district", features: policeDistricts.features, key: nameKey, title: titleCase },
  { set: "zip_code", column: /^(zip_?codes?|zip code|zipcode|zip|postal_?code|postcode)$/i,
    noun: "ZIP code", features: zipCodes.features, key: zipKey, title: (name) => `ZIP ${name}` },
];

// areaSetOf returns the set a column of this name and these values is
// drawn for, or undefined.
function areaSetOf(name, vals) {
  const set = AREA_SETS.find((a) => a.column.test(name));
  if (set) return set;
  return AREA_SETS.find((a) => {
    if (!a.named || !a.named.test(name) || !vals.length) return false;
    const names = new Set(a.features.map((f) => a.key(f.properties.name)));
    return 2 * vals.filter((v) => names.has(a.key(v))).length >= vals.length;
  });
}

// isPoint reports whether v is a GeoJSON point (as Socrata's point columns give them).
export function isPoint(v) {
  return v !== null && typeof v === "object" && v.type === "Point" && Array.isArray(v.coordinates) && v.coordinates.length >= 2;
}

function present(rows, name) {
  return rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined && v !== "");
}

// chooseChart returns what to draw for a result, or null:
//   {kind: "points", point}                   rows with a point column;
//   {kind: "line", value, label, period}      a measure by a time dimension;
//   {kind: "areas", value, label, set}        a measure by an area (AREA_SETS);
//   {kind: "bars", value, label}              a measure by any other group.
// columns are {name, type?}; rows are the result's first rows; query its text.
export function chooseChart(columns, rows, query = "") {
  const point = columns.find((c) => c.type === "point" || (present(rows, c.name).length > 0 && present(rows, c.name).every(isPoint)));
  if (point) return { kind: "points", point: point.name };
  const num = columns.filter((c) => MEASURE.test(c.name));
  if (columns.length !== 2 || num.length !== 1) return null;
  const value = num[0].name;
  const label = columns.find((c) => c !== num[0]);
  const vals = present(rows, label.name);
  if (TIME_TYPES.has(String(label.type || "").toLowerCase()) || (vals.length > 0 && vals.every((v) => typeof v === "string" && ISO_TIME.test(v)))) {
    return { kind: "line", value, label: label.name, period: truncation(query) };
  }
  const areas = areaSetOf(label.name, vals);
  if (areas) return { kind: "areas", value, label: label.name, set: areas.set };
  return { kind: "bars", value, label: label.name };
}

// truncation returns the period a query's date_trunc_* gives ("year",
// "month", "day"), when it uses one kind only; else "".
function truncation(query) {
  const kinds = new Set([...String(query).matchAll(/date_trunc_(ymd|ym|y)\s*\(/gi)].map((m) => m[1].toLowerCase()));
  if (kinds.size !== 1) return "";
  return { y: "year", ym: "month", ymd: "day" }[[...kinds][0]];
}

// ---- drawing helpers ----------------------------------------------------------------

function el(name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function titled(e, text) {
  e.appendChild(el("title", {}, text));
  return e;
}

function svgOf(W, H, label) {
  return el("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label });
}

function count(n) {
  return Number(n).toLocaleString("en-US");
}

function plural(n, one, many = one + "s") {
  return `${count(n)} ${n === 1 ? one : many}`;
}

// groupLabel is how a group's value reads on a chart: null is "(null)".
export function groupLabel(v) {
  if (v === null || v === undefined) return "(null)";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

// niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
function niceMax(m) {
  if (!(m > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(m));
  for (const k of [1, 2, 5, 10]) if (k * p >= m) return k * p;
  return 10 * p;
}

// ---- line over time -----------------------------------------------------------------

// parseTime reads an ISO date or timestamp (floating: as UTC) into its parts.
export function parseTime(v) {
  const m = typeof v === "string" && v.match(ISO_TIME);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3] || "1", m[4] || "0", m[5] || "0", m[6] || "0"].map(Number);
  return { y, mo, d, h, mi, s, ms: Date.UTC(y, mo - 1, d, h, mi, s) };
}

function pad(n) {
  return String(n).padStart(2, "0");
}

// periodOf picks the period of the times: the query's truncation when it
// has one, else the coarsest the values allow ("time" for timestamps).
function periodOf(times, hint) {
  if (hint) return hint;
  const midnight = times.every((t) => t.h === 0 && t.mi === 0 && t.s === 0);
  if (!midnight) return "time";
  if (times.some((t) => t.d !== 1)) return "day";
  if (times.length > 1 && times.every((t) => t.mo === 1)) return "year";
  return "month";
}

const PERIOD = {
  year: { index: (t) => t.y, label: (t) => String(t.y), fromIndex: (i) => String(i) },
  month: { index: (t) => t.y * 12 + t.mo - 1, label: (t) => `${t.y}-${pad(t.mo)}`, fromIndex: (i) => `${Math.floor(i / 12)}-${pad((i % 12) + 1)}` },
  day: {
    index: (t) => Math.floor(t.ms / 86400000), label: (t) => `${t.y}-${pad(t.mo)}-${pad(t.d)}`,
    fromIndex: (i) => new Date(i * 86400000).toISOString().slice(0, 10),
  },
  time: { index: (t) => t.ms, label: (t) => `${t.y}-${pad(t.mo)}-${pad(t.d)} ${pad(t.h)}:${pad(t.mi)}`, fromIndex: null },
};

// lineData turns rows into the points of a line in time order, whatever
// the rows' order: [{index, label, value}], the period, the gaps (runs of
// periods with no row) and the rows whose time is null or unreadable.
export function lineData(rows, spec) {
  const parsed = [];
  let untimed = 0;
  for (const r of rows) {
    const t = parseTime(r[spec.label]);
    if (!t) { untimed++; continue; }
    parsed.push({ t, value: Number(r[spec.value]) || 0 });
  }
  const period = periodOf(parsed.map((p) => p.t), spec.period);
  const P = PERIOD[period];
  const points = parsed.map((p) => ({ index: P.index(p.t), label: P.label(p.t), value: p.value })).sort((a, b) => a.index - b.index);
  const gaps = [];
  if (P.fromIndex) {
    for (let i = 1; i < points.length; i++) {
      if (points[i].index - points[i - 1].index > 1) {
        gaps.push({ after: i - 1, from: P.fromIndex(points[i - 1].index + 1), to: P.fromIndex(points[i].index - 1) });
      }
    }
  }
  return { points, period, gaps, untimed };
}

// drawLine draws a measure over time: the line breaks where periods have
// no row, and a shaded band marks each such gap.
export function drawLine(rows, spec, W) {
  const { points, period, gaps, untimed } = lineData(rows, spec);
  if (!points.length) return null;
  const dim = spec.period || (period === "time" ? spec.label : period);
  let label = `line chart of ${spec.value} by ${dim}, ${plural(points.length, "point")} from ${points[0].label} to ${points[points.length - 1].label}`;
  if (gaps.length) label += `, ${plural(gaps.length, "gap")} with no rows`;
  const H = 240, left = 56, right = 16, top = 12, bottom = 40;
  const svg = svgOf(W, H, label);
  svg.classList.add("line-chart");
  const maxV = niceMax(Math.max(...points.map((p) => p.value)));
  const i0 = points[0].index, i1 = points[points.length - 1].index;
  const x = (i) => left + (i1 === i0 ? (W - left - right) / 2 : (W - left - right) * (i - i0) / (i1 - i0));
  const y = (v) => top + (H - top - bottom) * (1 - v / maxV);
  // Axes and the value grid.
  for (let k = 0; k <= 4; k++) {
    const v = maxV * k / 4;
    svg.append(el("line", { class: "grid", x1: left, x2: W - right, y1: y(v), y2: y(v) }),
      el("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, count(v)));
  }
  for (const g of gaps) {
    const a = points[g.after], b = points[g.after + 1];
    svg.append(titled(el("rect", { class: "gap", x: x(a.index), y: top, width: Math.max(1, x(b.index) - x(a.index)), height: H - top - bottom }),
      g.from === g.to ? `no rows for ${g.from}` : `no rows from ${g.from} to ${g.to}`));
  }
  // The line, one polyline a run of consecutive periods.
  let run = [];
  const flush = () => {
    if (run.length) svg.append(el("polyline", { class: "line", fill: "none", points: run.map((p) => `${x(p.index).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ") }));
    run = [];
  };
  points.forEach((p, i) => {
    if (gaps.some((g) => g.after === i - 1)) flush();
    run.push(p);
  });
  flush();
  for (const p of points) {
    svg.append(titled(el("circle", { class: "point", cx: x(p.index).toFixed(1), cy: y(p.value).toFixed(1), r: points.length > 120 ? 1.5 : 3, "data-label": p.label, "data-value": p.value }),
      `${p.label}: ${count(p.value)}`));
  }
  // Period labels along the time axis: the first, the last, and between
  // them any point at least a label's width (80px) from the labels beside it.
  const shown = [0];
  for (let k = 1; k < points.length; k++) {
    if (x(points[k].index) - x(points[shown[shown.length - 1]].index) >= 80) shown.push(k);
  }
  if (points.length > 1) {
    while (shown.length > 1 && x(points[points.length - 1].index) - x(points[shown[shown.length - 1]].index) < 80) shown.pop();
    shown.push(points.length - 1);
  }
  for (const k of shown) {
    const p = points[k];
    svg.append(el("text", { class: "tick", x: x(p.index), y: H - bottom + 16, "text-anchor": k === 0 ? "start" : k === points.length - 1 ? "end" : "middle" }, p.label));
  }
  svg.append(el("text", { class: "axis", x: left + (W - left - right) / 2, y: H - 6, "text-anchor": "middle" }, dim));
  const notes = [];
  if (gaps.length) notes.push(`${plural(gaps.length, "gap")} in the line: ${period}s with no rows (shaded).`);
  if (untimed) notes.push(`${plural(untimed, "row")} with no ${spec.label} not drawn.`);
  return { svg, note: notes.join(" "), figures: { kind: "line", points: points.length, gaps: gaps.length } };
}

// ---- bars ---------------------------------------------------------------------------

// drawBars draws one bar a group, largest first; labels keep their size at
// any width.
export function drawBars(rows, spec, W) {
  const bars = rows.map((r) => ({ label: groupLabel(r[spec.label]), value: Number(r[spec.value]) || 0 }));
  if (!bars.length) return null;
  const maxV = Math.max(...bars.map((r) => r.value)) || 1;
  const bar = 18, gap = 4, right = 62, H = bars.length * (bar + gap) + 8;
  const left = Math.min(170, Math.round(W * 0.34));
  const maxChars = Math.max(6, Math.floor((left - 10) / 6.5));
  const svg = svgOf(W, H, `bar chart of ${spec.value} by ${spec.label}, ${plural(bars.length, "bar")}`);
  svg.classList.add("bar-chart");
  bars.forEach((r, i) => {
    const y = i * (bar + gap) + 4;
    const w = Math.max(1, (W - left - right) * r.value / maxV);
    const t = el("text", { x: left - 6, y: y + bar - 5, "text-anchor": "end" }, r.label.length > maxChars ? r.label.slice(0, maxChars - 1) + "…" : r.label);
    const rect = titled(el("rect", { x: left, y, height: bar, width: w, "data-label": r.label }), `${r.label}: ${r.value}`);
    svg.append(t, rect, el("text", { x: left + w + 4, y: y + bar - 5 }, count(r.value)));
  });
  return { svg, note: "", figures: { kind: "bars", bars: bars.length } };
}

// ---- maps ---------------------------------------------------------------------------

// The map's frame: San Francisco's neighborhoods' bounding box.
const AREAS = neighborhoods.features;
const BOX = (() => {
  const b = [Infinity, Infinity, -Infinity, -Infinity];
  const walk = (c) => {
    if (typeof c[0] === "number") {
      b[0] = Math.min(b[0], c[0]); b[1] = Math.min(b[1], c[1]); b[2] = Math.max(b[2], c[0]); b[3] = Math.max(b[3], c[1]);
    } else c.forEach(walk);
  };
  AREAS.forEach((f) => walk(f.geometry.coordinates));
  return b;
})();
const MARGIN = 0.01; // degrees around the city's box still counted as in it

function inBox(lon, lat) {
  return lon >= BOX[0] - MARGIN && lon <= BOX[2] + MARGIN && lat >= BOX[1] - MARGIN && lat <= BOX[3] + MARGIN;
}

// projection fits the city into W: longitude scaled by the cosine of the
// latitude (equirectangular), north up.
function projection(W) {
  const k = Math.cos(((BOX[1] + BOX[3]) / 2) * Math.PI / 180);
  const pad = 8;
  const s = (W - 2 * pad) / ((BOX[2] - BOX[0]) * k);
  const H = Math.round((BOX[3] - BOX[1]) * s + 2 * pad);
  return { H, xy: (lon, lat) => [pad + (lon - BOX[0]) * k * s, pad + (BOX[3] - lat) * s] };
}

function areaPath(geom, xy) {
  const polys = geom.type === "Polygon" ? [geom.coordinates] : geom.coordinates;
  return polys.map((rings) => rings.map((ring) => ring.map(([lon, lat], i) => {
    const [px, py] = xy(lon, lat);
    return (i ? "L" : "M") + px.toFixed(1) + "," + py.toFixed(1);
  }).join("") + "Z").join("")).join("");
}

// locate sorts a row's point into where it is drawn: in the city, in it
// once latitude and longitude are swapped back, outside it, or missing.
export function locate(v) {
  if (!isPoint(v)) return { where: "missing" };
  const [a, b] = v.coordinates.map(Number);
  if (inBox(a, b)) return { where: "in", lon: a, lat: b };
  if (inBox(b, a)) return { where: "swapped", lon: b, lat: a };
  return { where: "outside" };
}

function rowText(row, skip) {
  return Object.entries(row).filter(([k]) => k !== skip).map(([k, v]) => `${k}: ${groupLabel(v)}`).join("\n");
}

// drawPoints draws the rows' points on the neighborhoods of the city; a
// point's title is its row. Points outside the city, swapped ones (drawn
// where they belong) and rows with no point are counted and said.
export function drawPoints(rows, spec, W, total) {
  const { H, xy } = projection(W);
  const tally = { in: 0, swapped: 0, outside: 0, missing: 0 };
  const dots = [];
  for (const r of rows) {
    const p = locate(r[spec.point]);
    tally[p.where]++;
    if (p.where === "in" || p.where === "swapped") dots.push([p, r]);
  }
  const drawn = dots.length;
  let label = `map of ${plural(drawn, "point")}`;
  if (rows.length < total) label += ` (the first ${count(rows.length)} rows of ${count(total)})`;
  const off = [];
  if (tally.outside) off.push(`${plural(tally.outside, "point")} outside San Francisco not drawn`);
  if (tally.swapped) off.push(`${plural(tally.swapped, "point")} with latitude and longitude swapped, drawn where they belong`);
  if (tally.missing) off.push(`${plural(tally.missing, "row")} with no ${spec.point}`);
  if (off.length) label += "; " + off.join("; ");
  const svg = svgOf(W, H, label);
  svg.classList.add("map", "points-map");
  for (const f of AREAS) svg.append(titled(el("path", { class: "area", d: areaPath(f.geometry, xy) }), f.properties.name));
  for (const [p, r] of dots) {
    const [cx, cy] = xy(p.lon, p.lat);
    const text = rowText(r, spec.point);
    svg.append(titled(el("circle", { class: "point" + (p.where === "swapped" ? " swapped" : ""), cx: cx.toFixed(1), cy: cy.toFixed(1), r: drawn > 500 ? 2 : 3.5, "data-row": text }),
      text));
  }
  return { svg, note: off.length ? off.join("; ") + "." : "", figures: { kind: "points", points: drawn, ...tally } };
}

// drawAreas shades each area of the spec's set (a neighborhood, a
// district, a ZIP code) by its group's value (five classes); groups that name no area
// are counted and said.
export function drawAreas(rows, spec, W) {
  const set = AREA_SETS.find((a) => a.set === spec.set) || AREA_SETS[0];
  const byName = new Map(set.features.map((f) => [set.key(f.properties.name), f]));
  const values = new Map();
  const unmatched = [];
  for (const r of rows) {
    const name = r[spec.label];
    const k = set.key(name);
    const f = k !== null && byName.get(k);
    if (f) values.set(f, (values.get(f) || 0) + (Number(r[spec.value]) || 0));
    else unmatched.push(groupLabel(name));
  }
  if (!values.size) return null;
  const { H, xy } = projection(W);
  const maxV = Math.max(...values.values()) || 1;
  let label = `map of ${spec.value} by ${spec.label}, ${plural(values.size, "area")}`;
  const note = unmatched.length ? `${plural(unmatched.length, "group")} naming no ${set.noun} not drawn: ${unmatched.slice(0, 5).join(", ")}${unmatched.length > 5 ? ", …" : ""}.` : "";
  if (unmatched.length) label += `; ${plural(unmatched.length, "group")} naming no area`;
  const svg = svgOf(W, H, label);
  svg.classList.add("map", "areas-map");
  for (const f of set.features) {
    const v = values.get(f);
    const attrs = { class: "area" + (v === undefined ? "" : " valued"), d: areaPath(f.geometry, xy), "data-name": f.properties.name };
    if (v !== undefined) {
      const cls = Math.min(4, Math.floor(5 * v / maxV));
      attrs["data-value"] = v;
      attrs["fill-opacity"] = (0.2 + 0.2 * cls).toFixed(1);
    }
    attrs["data-row"] = `${set.title(f.properties.name)}: ${v === undefined ? "no rows" : count(v)}`;
    svg.append(titled(el("path", attrs), attrs["data-row"]));
  }
  // The legend: the five classes' shades and bounds, and the unshaded.
  const legend = el("g", { class: "legend" });
  for (let k = 0; k < 5; k++) {
    const lo = Math.ceil(maxV * k / 5), hi = k === 4 ? maxV : Math.ceil(maxV * (k + 1) / 5) - 1;
    legend.append(titled(el("rect", { class: "swatch", x: 8, y: 8 + k * 16, width: 14, height: 12, "fill-opacity": (0.2 + 0.2 * k).toFixed(1) }), `${count(lo)}–${count(hi)}`),
      el("text", { x: 27, y: 18 + k * 16 }, `${count(lo)}–${count(hi)}`));
  }
  legend.append(el("rect", { class: "swatch none", x: 8, y: 88, width: 14, height: 12 }), el("text", { x: 27, y: 98 }, "no rows"));
  svg.append(legend);
  return { svg, note, figures: { kind: "areas", areas: values.size, unmatched: unmatched.length } };
}
