// The entity page's time sliders: each step is an instant (an
// observation's time for record time, a value's start or end for valid
// time); letting go of one (or an arrow key) shows the snapshot at that
// instant, through the slider's query parameter (data-param: at or
// valid_at), keeping the other's.
(function () {
  var sliders = document.querySelectorAll("input.time-slider");
  Array.prototype.forEach.call(sliders, function (slider) {
    if (slider.getAttribute("data-bound")) return;
    slider.setAttribute("data-bound", "1");
    var times = JSON.parse(slider.getAttribute("data-times"));
    var param = slider.getAttribute("data-param");
    var label = document.getElementById(slider.id.replace(/-slider$/, "-label"));
    slider.addEventListener("input", function () { label.textContent = times[slider.value]; });
    slider.addEventListener("change", function () {
      var url = new URL(window.location.href);
      url.searchParams.delete("corrected");
      url.searchParams.set(param, times[slider.value]);
      window.location.href = url.toString();
    });
  });
})();
