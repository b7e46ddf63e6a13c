// Sort a table by the clicked column (numbers numerically), toggling the direction.
// Each header sorts its own table by its own column index (cellIndex): numbering the
// headers across the page broke every table after the first.
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th").forEach(function (th) {
    th.addEventListener("click", function () {
      var col = th.cellIndex;
      var body = table.tBodies[0];
      var asc = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col] ? a.cells[col].textContent.trim() : "";
        var y = b.cells[col] ? b.cells[col].textContent.trim() : "";
        var nx = parseFloat(x.replace(/,/g, "")), ny = parseFloat(y.replace(/,/g, ""));
        var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? cmp : -cmp;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});

// A table wider than its box hides columns: mark the box so the page says so
// (report.css), again whenever the window changes size.
function markOverflowing() {
  document.querySelectorAll(".scroll").forEach(function (box) {
    box.classList.toggle("overflowing", box.scrollWidth > box.clientWidth + 1);
  });
}
markOverflowing();
window.addEventListener("resize", markOverflowing);

// A printed page cannot be expanded: print every collapsed section (the findings, the
// systems tables, the method, the data problems) open, and close them again after.
var closedForPrint = [];
window.addEventListener("beforeprint", function () {
  closedForPrint = Array.prototype.filter.call(document.querySelectorAll("details"),
    function (d) { return !d.open; });
  closedForPrint.forEach(function (d) { d.open = true; });
});
window.addEventListener("afterprint", function () {
  closedForPrint.forEach(function (d) { d.open = false; });
  closedForPrint = [];
});
