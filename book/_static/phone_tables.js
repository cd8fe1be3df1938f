// On a phone a table of more than five columns reads as one card per row: each cell carries its
// column's header as a label (hidden on wider screens), and book.css stacks the cells on narrow
// screens. The labels are copies of the header cells, so their math is typeset like the header's.
(() => {
  const MAX_COLUMNS = 5;
  const label = () => {
    document.querySelectorAll(".bd-article table").forEach((table) => {
      const head = table.querySelector("thead tr");
      if (!head || head.children.length <= MAX_COLUMNS) return;
      const names = [...head.children];
      table.classList.add("phone-cards");
      table.querySelectorAll("tbody tr").forEach((row) => {
        [...row.children].forEach((cell, k) => {
          if (!names[k] || cell.querySelector(":scope > .cell-label")) return;
          const tag = document.createElement("span");
          tag.className = "cell-label";
          tag.innerHTML = names[k].innerHTML;
          const value = document.createElement("span");
          value.className = "cell-value";
          value.append(...cell.childNodes);
          cell.append(tag, value);
        });
      });
    });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", label);
  else label();
})();
