/* The reproduction report's summary, the claim explorer (ldp.book.report renders the table, class "ldp-explorer").
 * Click (or Enter on) a column's header to sort by it, again to reverse; choose a verdict, a section or a
 * cause to filter the rows. Plain DOM, no library, nothing fetched: it works offline. */
(function () {
  "use strict";
  var RANK = { "reproduced": 0, "partly reproduced": 1, "not reproduced": 2, "not testable here": 3 };

  function text(cell) { return (cell ? cell.textContent : "").replace(/\s+/g, " ").trim(); }
  function section(cell) { var m = /§(\w+)/.exec(text(cell)); return m ? "§" + m[1] : ""; }
  function cls(cell) { var s = cell ? cell.querySelector("strong") : null; return s ? text(s) : ""; }  // cause class
  function key(value, verdicts) {  // verdicts best first; numbers compared as numbers ("§6.2.10" after "§6.2.9")
    if (verdicts && value in RANK) { return String(RANK[value]); }
    return value.toLowerCase().replace(/\d+/g, function (n) { return ("000000" + n).slice(-6); });
  }

  function setup(table) {
    var head = table.tHead, body = table.tBodies[0];
    if (!head || !body || !head.rows.length) { return; }
    var names = Array.prototype.map.call(head.rows[0].cells, text);
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row) {  // the column's name beside each cell when the table becomes one column
      Array.prototype.forEach.call(row.cells, function (cell, i) { cell.setAttribute("data-label", names[i]); });
    });
    var bar = document.createElement("div");
    bar.className = "ldp-explorer-filters";
    var count = document.createElement("span");
    count.className = "ldp-explorer-count";
    var filters = [];
    [["Verdict", text], ["Claim", section], ["Cause", cls]].forEach(function (f) {
      var col = names.indexOf(f[0]);
      if (col < 0) { return; }
      var values = [];
      rows.forEach(function (row) {
        var v = f[1](row.cells[col]);
        if (values.indexOf(v) < 0) { values.push(v); }
      });
      values.sort(function (a, b) { var x = key(a, true), y = key(b, true); return x < y ? -1 : x > y ? 1 : 0; });
      var label = document.createElement("label");
      var select = document.createElement("select");
      label.appendChild(document.createTextNode((f[0] === "Claim" ? "Section" : f[0]) + " "));
      select.appendChild(new Option("all", "\u0000all"));
      values.forEach(function (v) { select.appendChild(new Option(v || "none", v)); });
      select.addEventListener("change", apply);
      label.appendChild(select);
      bar.appendChild(label);
      filters.push({ col: col, get: f[1], select: select });
    });
    bar.appendChild(count);

    function apply() {
      var shown = 0;
      rows.forEach(function (row) {
        var keep = filters.every(function (f) {
          return f.select.value === "\u0000all" || f.get(row.cells[f.col]) === f.select.value;
        });
        row.hidden = !keep;
        shown += keep ? 1 : 0;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }

    Array.prototype.forEach.call(head.rows[0].cells, function (th, i) {
      var direction = 1;
      function sort() {
        var sorted = rows.slice().sort(function (a, b) {
          var x = key(text(a.cells[i]), names[i] === "Verdict"), y = key(text(b.cells[i]), names[i] === "Verdict");
          return x < y ? -direction : x > y ? direction : 0;
        });
        sorted.forEach(function (row) { body.appendChild(row); });
        Array.prototype.forEach.call(head.rows[0].cells, function (c) { c.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
        direction = -direction;
      }
      th.setAttribute("role", "button");
      th.tabIndex = 0;
      th.title = "Sort by " + names[i];
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
      });
    });
    var where = table.closest(".pst-scrollable-table-container") || table;
    where.parentNode.insertBefore(bar, where);
    apply();
  }

  // the evidence of each claim is folded (a <details>, inside the folded <details> of its section): opening the
  // page at a claim's anchor, or following a link to it (the summary's ids, the first page, the boxes under the
  // figures), unfolds it and every fold around it
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (!el) { return; }
    var own = el.tagName === "DETAILS" ? el : el.querySelector("details");
    var folds = own ? [own] : [];
    for (var d = el.parentElement ? el.parentElement.closest("details") : null; d;
         d = d.parentElement ? d.parentElement.closest("details") : null) { folds.push(d); }
    var opened = folds.filter(function (f) { return !f.open; });
    opened.forEach(function (f) { f.open = true; });
    if (opened.length) { el.scrollIntoView(); }
  }

  function init() {
    document.querySelectorAll("table.ldp-explorer").forEach(setup);
    reveal();
    window.addEventListener("hashchange", reveal);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
}());
