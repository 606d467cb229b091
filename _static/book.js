// Opened from disk (file://), the browser refuses the search page's fetches of each result page
// for its summary (CORS), and logs an error per result: search then lists results without
// summaries. Served over HTTP (GitHub Pages), summaries stay on. tests/test_browser.py checks both.
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
