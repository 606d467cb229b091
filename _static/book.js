// Opened from disk (file://), the browser refuses the search page's fetches of each result page
// for its summary (CORS), and logs an error per result: search then lists results without
// summaries. Served over HTTP (GitHub Pages), summaries stay on. tests/test_browser.py checks both.
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}

// The header's download menu: its ".pdf" entry opens the page's PDF, made by scripts/book_pdf.py and
// published in pdf/ next to the HTML (.github/workflows/pages.yml): a chapter's own PDF, and the
// whole book's for the other pages. Where no PDF is found (a book built and opened from disk,
// without them), the entry prints the page, as the theme's does.
document.addEventListener("DOMContentLoaded", () => {
  const button = document.querySelector(".btn-download-pdf-button");
  const root = document.documentElement.dataset.content_root;
  if (!button || root === undefined) return;
  const base = new URL(root, window.location.href);
  const page = window.location.href.slice(base.href.length).split(/[?#]/)[0];
  const chapter = page.match(/^chapters\/([^/]+)\.html$/);
  const pdf = new URL(`pdf/${chapter ? chapter[1] : "book"}.pdf`, base).href;
  button.dataset.pdf = pdf;
  button.removeAttribute("onclick");
  button.setAttribute("title", chapter ? "This chapter as a PDF" : "The book as a PDF");
  button.addEventListener("click", async () => {
    if (window.location.protocol !== "file:") {
      try {
        if ((await fetch(pdf, { method: "HEAD" })).ok) {
          window.location.href = pdf;
          return;
        }
      } catch (error) {
        // no PDF published here: print the page instead
      }
    }
    window.print();
  });
});
