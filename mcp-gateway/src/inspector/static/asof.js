// The entity page's date slider: each step is one observation's time;
// letting go of it (or an arrow key) shows the snapshot as of that time.
(function () {
  var slider = document.getElementById("asof-slider");
  if (!slider) return;
  var times = JSON.parse(slider.getAttribute("data-times"));
  var label = document.getElementById("asof-label");
  slider.addEventListener("input", function () { label.textContent = times[slider.value]; });
  slider.addEventListener("change", function () {
    var url = new URL(window.location.href);
    url.searchParams.delete("corrected");
    url.searchParams.set("at", times[slider.value]);
    window.location.href = url.toString();
  });
})();
