// Search snippets without raw TeX: Sphinx's search shows the text of the page's HTML, where the
// math is still its TeX source (MathJax typesets it only in the page). Each math element's text
// is read as plain symbols first: "\(b_{\mathrm{max}}\)" becomes "b_max".
window.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || !Search.htmlToText) return;
  const original = Search.htmlToText;
  const plain = (tex) => tex
    .replace(/\\[()[\]]/g, " ")
    .replace(/\\(?:displaystyle|textstyle|begin\{[^{}]*\}|end\{[^{}]*\})/g, " ")
    .replace(/\\\\|&/g, " ")
    .replace(/\\(?:mathrm|text|mathbf|mathit|operatorname)\s*\{([^{}]*)\}/g, "$1")
    .replace(/\\(?:left|right|,|;|!|quad|qquad)/g, " ")
    .replace(/\\([A-Za-z]+)/g, "$1")
    .replace(/[{}]/g, "")
    .replace(/\s+/g, " ")
    .trim();
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page.querySelectorAll(".math").forEach((el) => { el.textContent = plain(el.textContent); });
    return original(page.documentElement.outerHTML, anchor);
  };
});
