"""The console's server-side SVG (agent/commands/console/svg.py): well-formed XML, every
drawn point inside the viewBox, text escaped, and a clear "no data" drawing for nothing."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

from agent.commands.console import svg

NS = {"s": "http://www.w3.org/2000/svg"}
EVIL = '<script>alert("x")</script> & "quotes"'


def parse(text: str) -> ET.Element:
    root = ET.fromstring(text)  # raises on anything not well-formed
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    return root


def viewbox(root: ET.Element) -> tuple[float, float]:
    x0, y0, w, h = (float(v) for v in root.attrib["viewBox"].split())
    assert (x0, y0) == (0, 0)
    return w, h


def points_inside(root: ET.Element) -> int:
    """Every circle centre and polyline vertex within the viewBox; how many there were."""
    w, h = viewbox(root)
    seen = 0
    for c in root.iter("{http://www.w3.org/2000/svg}circle"):
        x, y = float(c.attrib["cx"]), float(c.attrib["cy"])
        assert 0 <= x <= w and 0 <= y <= h, (x, y, w, h)
        seen += 1
    for pl in root.iter("{http://www.w3.org/2000/svg}polyline"):
        for pair in pl.attrib["points"].split():
            x, y = (float(v) for v in pair.split(","))
            assert 0 <= x <= w and 0 <= y <= h, (x, y, w, h)
            seen += 1
    for r in root.iter("{http://www.w3.org/2000/svg}rect"):
        x, y = float(r.attrib["x"]), float(r.attrib["y"])
        assert 0 <= x <= w and 0 <= y <= h
        assert x + float(r.attrib["width"]) <= w + 0.5 and y + float(r.attrib["height"]) <= h
    return seen


def texts(root: ET.Element) -> str:
    return " ".join("".join(t.itertext()) for t in root.iter()
                    if t.tag.endswith("}text") or t.tag.endswith("}title"))


def test_line_chart_over_time_several_series() -> None:
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    series = {"curiosity": [(t0 + timedelta(days=i), 0.5 + i / 40) for i in range(10)],
              "honesty": [(t0 + timedelta(days=i), 0.9) for i in range(0, 10, 3)],
              EVIL: [(t0 + timedelta(days=2), 0.1)]}
    out = svg.line_chart(series, title="weights " + EVIL, y_min=0, y_max=1)
    root = parse(out)
    assert points_inside(root) >= 10 + 4 + 1
    assert len(root.findall(".//s:polyline", NS)) == 2  # a one-point series: a dot only
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert EVIL in texts(root)  # the text survives, as text
    assert "2026-11-01" in texts(root)  # a time axis in UTC dates


def test_line_chart_clamps_values_outside_a_fixed_range() -> None:
    out = svg.line_chart({"v": [(0.0, -5.0), (1.0, 0.5), (2.0, 9.0)]}, title="t",
                         y_min=0, y_max=1)
    assert points_inside(parse(out)) == 6


def test_line_chart_one_point_and_flat_values() -> None:
    root = parse(svg.line_chart({"p95": [(datetime(2026, 1, 1, tzinfo=UTC), 12.0)]},
                                title="latency"))
    assert points_inside(root) == 1


def test_empty_data_says_no_data() -> None:
    for out in (svg.line_chart({}, title="valence"),
                svg.line_chart({"a": []}, title="valence"),
                svg.calibration_plot([], title="calibration"),
                svg.tree([], title="RAPTOR")):
        root = parse(out)
        words = texts(root)
        assert "no " in words, words
        assert root.findall(".//s:circle", NS) == []


def test_calibration_plot_has_the_diagonal_and_bins() -> None:
    bins = [svg.CalibrationBin(0.1, 0.2, 3), svg.CalibrationBin(0.5, 0.4, 10),
            svg.CalibrationBin(0.9, 1.0, 1), svg.CalibrationBin(0.7, 0.7, 0)]
    root = parse(svg.calibration_plot(bins, title="calibration"))
    diagonal = [ln for ln in root.findall(".//s:line", NS)
                if ln.attrib.get("class") == "diagonal"]
    assert len(diagonal) == 1
    d = diagonal[0].attrib  # from (0, 0) bottom left to (1, 1) top right
    assert float(d["x1"]) < float(d["x2"]) and float(d["y1"]) > float(d["y2"])
    dots = [c for c in root.findall(".//s:circle", NS) if c.attrib.get("class") == "bin"]
    assert len(dots) == 3  # the empty bin is not drawn
    assert "n=10" in texts(root)
    points_inside(root)


def test_tree_levels_links_and_escaping() -> None:
    nodes = [svg.TreeNode("c3", 3, "everything " + EVIL, None, "#cluster-c3", 4),
             svg.TreeNode("b1", 2, "work", "c3", "#cluster-b1", 3),
             svg.TreeNode("a1", 1, "the build", "b1", "#cluster-a1", 2),
             svg.TreeNode("a2", 1, "the tests", "b1", "#cluster-a2", 1),
             svg.TreeNode("a3", 1, "an orphan", "missing", None, 1)]
    out = svg.tree(nodes, title="RAPTOR")
    root = parse(out)
    points_inside(root)
    links = [a.attrib["href"] for a in root.iter("{http://www.w3.org/2000/svg}a")]
    assert links == ["#cluster-c3", "#cluster-b1", "#cluster-a1", "#cluster-a2"]
    assert "<script>" not in out and EVIL in texts(root)
    boxes = {g.attrib["data-level"]: [] for g in root.iter("{http://www.w3.org/2000/svg}g")}
    assert set(boxes) == {"1", "2", "3"}
    # the canopy is drawn above its branch, the branch above its leaves
    ys = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        rect = g.find(".//s:rect", NS)
        assert rect is not None
        ys.setdefault(g.attrib["data-level"], set()).add(float(rect.attrib["y"]))
    assert max(ys["3"]) < min(ys["2"]) < min(ys["1"])
    assert len(root.findall(".//s:line", NS)) == 3  # c3-b1, b1-a1, b1-a2


def test_a_wide_tree_stays_within_its_width() -> None:
    nodes = [svg.TreeNode(f"n{i}", 1, f"cluster {i}", None, f"#c{i}") for i in range(300)]
    root = parse(svg.tree(nodes, title="RAPTOR", max_width=1200))
    w, _ = viewbox(root)
    assert w <= 1200
    points_inside(root)


def test_a_tree_with_many_leaves_runs_left_to_right() -> None:
    nodes = [svg.TreeNode("top", 3, "canopy", None, "#top")]
    nodes += [svg.TreeNode(f"t{j}", 2, f"trunk {j}", "top", f"#t{j}") for j in range(4)]
    nodes += [svg.TreeNode(f"b{i}", 1, f"branch {i} " + "words " * 20, f"t{i % 4}", f"#b{i}")
              for i in range(40)]
    root = parse(svg.tree(nodes, title="RAPTOR", max_width=920))
    w, h = viewbox(root)
    assert w <= 920 and h > 40 * 30  # a row per branch
    points_inside(root)
    xs: dict[str, set[float]] = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        rect = g.find(".//s:rect", NS)
        assert rect is not None
        xs.setdefault(g.attrib["data-level"], set()).add(float(rect.attrib["x"]))
    assert max(xs["3"]) < min(xs["2"]) < min(xs["1"])  # a column per level
    assert all(len(v) == 1 for v in xs.values())
    assert len(root.findall(".//s:line", NS)) == 44
    assert "branch 7" in texts(root)
