// The document page's one script: a selection in the document's text fills the add form's evidence (its span in
// code points of the scrubbed text, as the server counts, and its text). Without it the typed quote is located.
(function () {
  "use strict";
  var source = document.getElementById("source");
  var form = document.getElementById("add-form");
  if (!source || !form) {
    return;
  }
  function codePointsBefore(node, offset) {
    var range = document.createRange();
    range.setStart(source, 0);
    range.setEnd(node, offset);
    return Array.from(range.toString()).length;
  }
  function copySelection() {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) {
      return;
    }
    var range = selection.getRangeAt(0);
    if (!source.contains(range.startContainer) || !source.contains(range.endContainer)) {
      return;
    }
    var start = codePointsBefore(range.startContainer, range.startOffset);
    var end = codePointsBefore(range.endContainer, range.endOffset);
    form.elements.span_start.value = String(start);
    form.elements.span_end.value = String(end);
    form.elements.quote.value = range.toString();
    document.getElementById("selection-note").textContent = "selected characters " + start + " to " + end;
  }
  document.addEventListener("selectionchange", copySelection);
})();
