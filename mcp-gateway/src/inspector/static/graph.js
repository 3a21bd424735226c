// Draws the neighborhood embedded in the page (#graph-data: cytoscape
// elements) and opens an entity when its node is clicked or activated.
(function () {
  var elements = JSON.parse(document.getElementById("graph-data").textContent);
  var cy = cytoscape({
    container: document.getElementById("graph"),
    elements: elements,
    layout: { name: "breadthfirst", directed: true, padding: 20 },
    style: [
      { selector: "node", style: { label: "data(label)", "background-color": "#3b6ea5", color: "#222",
                                   "font-size": 11, "text-valign": "bottom", "text-margin-y": 4 } },
      { selector: "node.center", style: { "background-color": "#c0392b" } },
      { selector: "edge", style: { label: "data(label)", width: 1.5, "line-color": "#999", "target-arrow-color": "#999",
                                   "target-arrow-shape": "triangle", "curve-style": "bezier", "font-size": 9 } }
    ]
  });
  cy.on("tap", "node", function (event) {
    window.location.href = "/inspector/entities/" + encodeURIComponent(event.target.id());
  });
  window.inspectorGraph = cy;
})();
