// Optional help; every page works without it. A button with
// data-confirm asks before its form is sent.
document.addEventListener("submit", (e) => {
  const b = e.submitter;
  if (b && b.dataset.confirm && !window.confirm(b.dataset.confirm)) {
    e.preventDefault();
  }
});
