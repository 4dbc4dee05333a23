/* cyclebench report: sortable tables and the plots (docs/site.md). No network: plotly.js is the
   site's own copy (static/plotly.min.js), each figure a JSON element beside its <div>. */
(function () {
  "use strict";

  /* a cell's sort key: the number it starts with (thousands separators, a leading ± [ ~ ≈ < >
     dropped; − read as -), else its text; "-" and "" sort last either way */
  function key(td) {
    var t = (td.textContent || "").trim();
    if (t === "" || t === "-") return null;
    var s = t.replace(/^[±\[~≈<>#▲▼ ]+/, "").replace(/,/g, "").replace(/\u2212/g, "-");
    var m = s.match(/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?/i);
    return m ? { n: parseFloat(m[0]), s: t } : { n: null, s: t };
  }

  function compare(a, b) {
    if (a === null || b === null) return a === b ? 0 : (a === null ? 1 : -1);
    if (a.n !== null && b.n !== null) return a.n - b.n;
    if (a.n !== null) return -1;
    if (b.n !== null) return 1;
    return a.s.localeCompare(b.s);
  }

  function sortBy(th) {
    var table = th.closest("table"), body = table.tBodies[0];
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var rows = Array.prototype.map.call(body.rows, function (tr, i) {
      return { tr: tr, k: tr.cells[col] ? key(tr.cells[col]) : null, i: i };
    });
    rows.sort(function (a, b) {
      if (a.k === null || b.k === null) return compare(a.k, b.k) || a.i - b.i;  /* empty cells last */
      return (asc ? compare(a.k, b.k) : compare(b.k, a.k)) || a.i - b.i;
    });
    rows.forEach(function (r) { r.tr.classList.remove("end"); body.appendChild(r.tr); });
  }

  document.addEventListener("click", function (e) {
    var th = e.target.closest && e.target.closest("table.sortable thead th");
    if (th) sortBy(th);
  });

  function draw() {
    if (typeof Plotly === "undefined") return;
    document.querySelectorAll("div.plot").forEach(function (div) {
      var fig = JSON.parse(document.getElementById(div.dataset.figure).textContent);
      Plotly.newPlot(div, fig.data, fig.layout, { responsive: true, displaylogo: false });
      var runs = div.dataset.runs;
      if (runs) {
        div.on("plotly_click", function (ev) {
          var p = ev.points && ev.points[0], cd = p && p.customdata;
          var id = Array.isArray(cd) ? cd[0] : cd;
          if (id !== undefined && id !== null) window.location.href = runs + id + ".html";
        });
      }
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw);
  else draw();
})();
