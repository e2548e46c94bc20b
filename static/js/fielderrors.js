// Errors beside the form fields they are about (new-cluster form, sweep form): the field is
// outlined and marked aria-invalid, the words go right after it. Plain DOM, text only.

/** Remove every error mark under `root`. */
export function clearFieldErrors(root) {
  for (const el of root.querySelectorAll(".field-err")) el.remove();
  for (const el of root.querySelectorAll(".invalid")) { el.classList.remove("invalid"); el.removeAttribute("aria-invalid"); }
}

/** Mark `input` and write `message` after it (after its row or label when it sits in one);
 *  `field` is the document path the error names (data-field, for tests and tools). */
export function showFieldError(input, message, field) {
  input.classList.add("invalid");
  input.setAttribute("aria-invalid", "true");
  const note = document.createElement("div");
  note.className = "field-err err-text small";
  note.dataset.field = field;
  note.textContent = message;
  (input.closest(".row, .an-axis, label") || input).after(note);
}
