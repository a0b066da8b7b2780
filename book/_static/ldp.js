// The book's own script (listed in _config.yml, html_js_files); no library, nothing fetched.
// Every figure image opens at full size: on a phone a figure is shrunk to the screen's width,
// so a tap on it shows the image (an SVG) alone, where it can be zoomed.
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("article figure img").forEach((img) => {
    if (img.closest("a[href]")) return;
    const link = document.createElement("a");
    link.href = img.getAttribute("src");
    link.title = "Open the figure at full size";
    img.parentNode.insertBefore(link, img);
    link.appendChild(img);
  });
});
