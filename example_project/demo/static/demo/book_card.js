// The book card: fills itself from show_book's structured result, and asks search_books for the author's
// other books through the host. Everything from the result goes in as text, never as HTML.
(function () {
  "use strict";
  var app = window.mcpApp;
  var author = null;
  function text(id, value) { document.getElementById(id).textContent = value; }

  app.onToolResult(function (result) {
    var book = result.structuredContent;
    if (result.isError || !book) {
      text("title", (result.content && result.content[0] && result.content[0].text) || "?");
      return;
    }
    author = book.author;
    text("title", book.title);
    text("byline", book.author + " · " + book.year);
    document.getElementById("more").hidden = false;
    document.getElementById("card").setAttribute("aria-busy", "false");
  });

  document.getElementById("more").addEventListener("click", function () {
    app.callTool("search_books", {query: author}).then(function (result) {
      var list = document.getElementById("others");
      list.textContent = "";
      var lines = (result.content && result.content[0] && result.content[0].text || "").split("\n");
      lines.forEach(function (line) {
        var item = document.createElement("li");
        item.textContent = line;
        list.appendChild(item);
      });
      list.setAttribute("data-loaded", "true");
    });
  });
})();
