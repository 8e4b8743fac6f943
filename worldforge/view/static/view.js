// worldforge view: the little the server cannot do. Provenance hover, and replaying a trajectory turn by turn.
(function () {
  "use strict";
  // Provenance: a marked passage lights up its facts in the side list, and a fact its passages.
  var side = document.querySelector("aside.prov");
  if (side) {
    var article = document.querySelector("article.page");
    var lit = [];
    var clear = function () { lit.forEach(function (e) { e.classList.remove("hl"); }); lit = []; };
    var light = function (ids) {
      clear();
      ids.forEach(function (i) {
        side.querySelectorAll('li[data-f="' + i + '"]').forEach(function (e) { e.classList.add("hl"); lit.push(e); });
        article.querySelectorAll(".b.f").forEach(function (b) {
          if ((" " + b.getAttribute("data-f") + " ").indexOf(" " + i + " ") >= 0) { b.classList.add("hl"); lit.push(b); }
        });
      });
    };
    article.addEventListener("mouseover", function (ev) {
      var b = ev.target.closest(".b.f");
      if (b) light(b.getAttribute("data-f").split(" "));
    });
    side.addEventListener("mouseover", function (ev) {
      var li = ev.target.closest("li[data-f]");
      if (li) light([li.getAttribute("data-f")]);
    });
  }
  // A tool result loads when its box opens (a long trajectory's pages would make a page of megabytes).
  document.querySelectorAll("details.res[data-src]").forEach(function (d) {
    d.addEventListener("toggle", function () {
      var body = d.querySelector(".res-body");
      if (!d.open || body.getAttribute("data-loaded")) return;
      body.setAttribute("data-loaded", "1");
      body.textContent = "loading…";
      fetch(d.getAttribute("data-src") + "&fragment=1").then(function (r) { return r.text(); })
        .then(function (t) { body.innerHTML = t; }, function () { body.textContent = "could not load the result"; });
    });
  });
  // Replay: show the turns up to the current one; previous / next buttons and the arrow keys.
  var bar = document.querySelector(".replay");
  if (bar) {
    var turns = Array.prototype.slice.call(document.querySelectorAll("section.turn"));
    var assistant = turns.filter(function (t) { return t.hasAttribute("data-turn"); });
    var n = assistant.length;
    var pos = document.getElementById("pos");
    var cur = parseInt(bar.getAttribute("data-start") || "0", 10);
    var show = function (k) {
      cur = Math.max(0, Math.min(n, k));
      if (cur === 0) {
        document.body.classList.remove("stepping");
        turns.forEach(function (t) { t.classList.remove("current", "earlier", "later"); });
        pos.textContent = "all " + n + " steps";
        return;
      }
      document.body.classList.add("stepping");
      var target = assistant[cur - 1];
      var idx = turns.indexOf(target);
      turns.forEach(function (t, i) {
        t.classList.toggle("current", i === idx);
        t.classList.toggle("earlier", i < idx);
        t.classList.toggle("later", i > idx);
      });
      pos.textContent = "step " + cur + " of " + n;
      target.scrollIntoView({ block: "nearest" });
      if (history.replaceState) {
        var u = new URL(window.location.href); u.searchParams.set("step", cur); history.replaceState(null, "", u);
      }
    };
    document.getElementById("next").addEventListener("click", function () { show(cur + 1); });
    document.getElementById("prev").addEventListener("click", function () { show(Math.max(1, cur - 1)); });
    document.getElementById("all").addEventListener("click", function () { show(0); });
    document.addEventListener("keydown", function (ev) {
      if (ev.target.tagName === "INPUT") return;
      if (ev.key === "ArrowRight") show(cur + 1);
      if (ev.key === "ArrowLeft") show(Math.max(1, cur - 1));
    });
    if (cur > 0) show(cur);
  }
})();
