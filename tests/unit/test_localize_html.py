"""report.html: the failing graph drawn as SVG, colored by error, linked to kernels, offline."""
import re
from html.parser import HTMLParser

import torch
import torch.fx as fx

from minifier.report import html as html_report
from minifier.localize.graphs import node_table


class Small(torch.nn.Module):
    def forward(self, x, w):
        a = torch.neg(x)
        b = a * w
        c = torch.relu(b)
        d = torch.sigmoid(w)
        return c.sum() + d.mean() + a.mean()


def _localization():
    gm = fx.symbolic_trace(Small())
    names = [n.name for n in gm.graph.nodes]
    assert {"neg", "mul", "relu", "sigmoid"} <= set(names)
    metrics = {"neg": {"ok": False, "mismatch_fraction": 1.0, "max_abs_err": 2.0},
               "mul": {"ok": False, "mismatch_fraction": 0.5, "max_abs_err": 1.0},
               "relu": {"ok": False, "mismatch_fraction": 0.25, "max_abs_err": 1.0},
               "sigmoid": {"ok": True, "max_abs_err": 0.0}}
    kernels = {"neg": ["cpp_fused_mul_neg_relu_0"], "mul": ["cpp_fused_mul_neg_relu_0"],
               "relu": ["cpp_fused_mul_neg_relu_0"], "sigmoid": ["cpp_fused_sigmoid_1"]}
    nodes = node_table(gm, metrics, ["neg"], {}, kernels)
    return {"graph": 3, "part": "forward", "key": "3", "stage": "inductor", "kind": "accuracy",
            "inductor_bug": True, "stages": {"eager": "pass", "inductor": "fail (accuracy)"}, "nodes": nodes,
            "first_divergent": [{**next(n for n in nodes if n["name"] == "neg"),
                                 "kernels": [{"name": "cpp_fused_mul_neg_relu_0", "kind": "cpp",
                                              "nodes": ["neg", "mul", "relu"], "source": "auto tmp1 = 2 * tmp0;"}]}],
            "unobserved": [], "bracket": None, "observation": "test",
            "kernels": [{"name": "cpp_fused_mul_neg_relu_0", "kind": "cpp", "nodes": ["neg", "mul", "relu"],
                         "source": "auto tmp1 = 2 * tmp0;"},
                        {"name": "cpp_fused_sigmoid_1", "kind": "cpp", "nodes": ["sigmoid"], "source": "sig"}]}


class Tags(HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr", "path", "rect", "marker"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.ids, self.hrefs = [], [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if "href" in attrs:
            self.hrefs.append(attrs["href"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def test_page_is_offline_balanced_and_every_link_lands():
    loc = _localization()
    page = html_report.render({"status": "reproduced", "graphs": [{"index": 3, "nodes": 7, "failing": True}]}, [loc])
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<link" not in page and "@import" not in page and "url(http" not in page
    tags = Tags()
    tags.feed(page)
    assert not tags.errors and not tags.stack, (tags.errors, tags.stack)
    for node in loc["nodes"]:
        assert f"g3-node-{node['name']}" in tags.ids
    internal = [h[1:] for h in tags.hrefs if h.startswith("#")]
    assert internal and all(target in tags.ids for target in internal)
    assert f"#{html_report.anchor(3, 'cpp_fused_mul_neg_relu_0')}" in tags.hrefs


def test_colors_and_highlight_follow_the_errors():
    svg = html_report.graph_svg(_localization())
    boxes = dict(re.findall(r'id="g3-node-(\w+)">.*?<rect [^>]*fill="([^"]+)"', svg, re.S))
    assert boxes["sigmoid"] == html_report.STATUS_COLORS["ok"]
    assert boxes["x"] == boxes["w"] == html_report.STATUS_COLORS["input"]
    lightness = {n: int(re.search(r",(\d+)%\)$", boxes[n]).group(1)) for n in ("neg", "mul", "relu")}
    assert lightness["neg"] < lightness["mul"] < lightness["relu"]  # more elements wrong: darker
    assert svg.count('stroke="#b00020"') == 1
    assert re.search(r'id="g3-node-neg">.*?stroke="#b00020"', svg, re.S)


def test_layout_edges_point_down_and_boxes_do_not_overlap():
    nodes = _localization()["nodes"]
    boxes = html_report.layout(nodes)
    assert set(boxes) == {n["name"] for n in nodes}
    for n in nodes:
        for i in n["inputs"]:
            assert boxes[i][1] < boxes[n["name"]][1], (i, n["name"])
    rows = {}
    for name, (x, y, w) in boxes.items():
        rows.setdefault(y, []).append((x, x + w))
    for spans in rows.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def _crash_report(loc):
    """A crash's report: nothing diverged, no node named; the repro kept one neg."""
    for n in loc["nodes"]:
        n["status"] = "input" if n["status"] == "input" else "unknown"
        n["first_divergent"] = False
    loc.update(first_divergent=[], kind="crash")
    return {"status": "reproduced", "failing_graph": 3, "graphs": [{"index": 3, "nodes": 7, "failing": True}],
            "failure": {"kind": "crash", "message": "process died: SIGABRT", "culprit": None},
            "ops_before": 4, "ops_after": 1, "ops": ["neg"],
            "passes": {"cut_at_divergence": {"runs": 2, "compiles": 1, "successes": 0},
                       "shrink_shapes": {"runs": 2, "compiles": 3, "successes": 1}},
            "blame": [{"what": "lowering", "finding": "falling back neg to ATen makes it pass"}]}


def _outlined(svg):
    return set(re.findall(r'id="g3-node-(\w+)"><title>[^<]*</title><rect [^>]*stroke="#b00020"', svg))


def test_the_culprit_is_marked_for_a_crash_and_for_an_accuracy_failure():
    loc = _localization()
    accuracy = {"status": "reproduced", "failing_graph": 3, "ops": ["neg"], "ops_before": 4, "ops_after": 1,
                "failure": {"kind": "accuracy", "message": "differs", "culprit": "neg"}, "graphs": []}
    assert _outlined(html_report.render(accuracy, [loc])) == {"neg"}
    crash_loc = _localization()
    page = html_report.render(_crash_report(crash_loc), [crash_loc])
    assert _outlined(page) == {"neg"}  # the op the repro kept, the graph's only neg
    assert re.search(r'id="g3-node-neg">.*?fill="#ffd27a"', page, re.S)
    assert "the culprit (outlined in red): <b>neg</b>" in page


def test_reduction_blame_and_timeline_sections():
    loc = _localization()
    timeline = [{"op": "warmup", "worker": "worker-0", "start": 0.1, "seconds": 0.2, "status": "ready"},
                {"op": "capture", "start": -5.0, "seconds": 9.0, "status": "ok"},
                {"op": "check", "stage": "inductor", "worker": "worker-1", "start": 4.0, "seconds": 1.5,
                 "status": "fail"},
                {"op": "check", "stage": "eager", "worker": "worker-0", "start": 4.2, "seconds": 0.5, "status": "pass"}]
    page = html_report.render(_crash_report(loc), [loc], timeline)
    assert "<h2>Reduction</h2>" in page and "4 ops \u2192 1 (neg)" in page
    assert re.search(r"<tr class=kept><td>shrink_shapes</td><td>2</td><td>3</td><td>1</td>", page)
    assert "<h2>Blame</h2>" in page and "lowering: falling back neg to ATen makes it pass" in page
    svg = page[page.index('<svg class="timeline"'):]
    svg = svg[:svg.index("</svg>")]
    assert svg.count('<rect class="job"') == len(timeline)
    assert all(f">{lane}</text>" in svg for lane in ("capture", "worker-0", "worker-1"))
    tags = Tags()
    tags.feed(page)
    assert not tags.errors and not tags.stack, (tags.errors, tags.stack)
