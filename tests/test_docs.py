"""The documentation: the site builds in strict mode, the built pages hold what they should,
and the Python examples of docs/tuning.md run as written.

The full build (``mkdocs build --strict`` into a temporary folder, as CI does) is shared by
the site tests; the example scripts of docs/examples/ are run by ``scripts/run_examples.sh``
in CI, not here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

HAVE_MKDOCS = all(
    importlib.util.find_spec(m) is not None
    for m in ("mkdocs", "material", "mkdocstrings_handlers")
)
needs_mkdocs = pytest.mark.skipif(not HAVE_MKDOCS, reason="needs the docs extra (mkdocs)")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = sorted((DOCS / "examples").glob("*.py"))
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


class _Page(HTMLParser):
    """Headings (level, text) of the article, image sources, and all text."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[tuple[int, str]] = []
        self.images: list[str] = []
        self.text: list[str] = []
        self._heading: int | None = None
        self._buffer: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self._heading, self._buffer = int(tag[1]), []
        elif tag == "img":
            self.images.append(dict(attrs).get("src", ""))

    def handle_endtag(self, tag: str) -> None:
        if self._heading is not None and tag == f"h{self._heading}":
            text = "".join(self._buffer).replace("¶", "").strip()
            self.headings.append((self._heading, text))
            self._heading = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._heading is not None:
            self._buffer.append(data)


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    return out


@pytest.mark.slow  # renders the whole site (mkdocs build, 14 s); CI's mkdocs step builds it too
@needs_mkdocs
def test_index_page_has_its_sections(site):
    page = parse(site / "index.html")
    assert (1, "tabmoe") in page.headings
    h2 = [text for level, text in page.headings if level == 2]
    for section in ("What it does", "A first model", "Where to go next", "Status"):
        assert section in h2, (section, h2)
    # The navigation reaches every part of the site.
    text = " ".join(page.text)
    for entry in ("Installation", "Quick start", "User guide", "OOD splits and your own data",
                  "API reference", "Changelog"):
        assert entry in text, entry


@pytest.mark.slow  # renders the whole site (mkdocs build, 14 s); CI's mkdocs step builds it too
@needs_mkdocs
def test_guide_page_has_its_sections_and_the_example_that_runs(site):
    page = parse(site / "guide" / "columns" / "index.html")
    assert (1, "Columns, missing and unseen values") in page.headings
    h2 = [text for level, text in page.headings if level == 2]
    for section in ("Categorical columns", "Numeric columns", "Missing values",
                    "Values unseen during fit", "Example"):
        assert section in h2, (section, h2)
    text = "".join(page.text)
    # The embedded script is the file itself, and its recorded output follows it.
    assert "tok = ColumnTokenizer(n_bins=10).fit(X)" in text
    recorded = (DOCS / "examples" / "output" / "columns.txt").read_text(encoding="utf8")
    assert recorded.strip() and recorded.splitlines()[0].strip() in text


@pytest.mark.slow  # renders the whole site (mkdocs build, 14 s); CI's mkdocs step builds it too
@needs_mkdocs
def test_quickstart_shows_the_generated_plot(site):
    page = parse(site / "quickstart" / "index.html")
    assert page.images, "no image on the quick start page"
    for src in page.images:
        if not src.startswith(("http:", "https:", "data:")):
            assert (site / "quickstart" / src).resolve().is_file(), src


@pytest.mark.slow  # renders the whole site (mkdocs build, 14 s); CI's mkdocs step builds it too
@needs_mkdocs
def test_api_reference_renders_the_estimator_with_its_own_defaults(site):
    html = (site / "api" / "estimator" / "index.html").read_text(encoding="utf8")
    assert 'id="tabmoe.TabularMoEClassifier"' in html
    assert 'id="tabmoe.TabularMoEClassifier.fit"' in html
    # "d_model, n_heads, ff_dim, dropout :" is one docstring entry; each name must
    # show its own default (griffe alone would give dropout the default of d_model, 20).
    row = re.search(r"<code>dropout</code>.*?</tr>", html, flags=re.S)
    assert row is not None
    default_cell = re.findall(r"<td>\s*<code>([^<]*)</code>\s*</td>", row.group(0))[-1]
    assert default_cell == "0.0" and ">20<" not in row.group(0).replace(" ", "")


def test_every_example_is_embedded_in_a_page():
    pages = "\n".join(p.read_text(encoding="utf8") for p in DOCS.rglob("*.md"))
    embedded = set(re.findall(r'--8<-- "docs/examples/([\w-]+\.py)"', pages))
    owned_elsewhere = {"plot_gates.py"}  # the MoE page (docs/moe.md) embeds its own figure
    missing = [f.name for f in EXAMPLES if f.name not in embedded | owned_elsewhere]
    assert not missing, f"examples not shown on any page: {missing}"


@needs_mkdocs
def test_strict_build_rejects_broken_links_and_missing_snippets(tmp_path):
    """The same configuration fails on a link to a missing page and a missing snippet file."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [nowhere](nowhere.md).\n", encoding="utf8")
    config = load_config(
        str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(tmp_path / "site"),
        nav=[{"Home": "index.md"}], plugins=["search"],
    )
    with pytest.raises(Abort):
        build(config)
    (docs / "index.md").write_text('# Home\n\n--8<-- "docs/examples/no-such-file.py"\n',
                                   encoding="utf8")
    with pytest.raises(Exception, match="no-such-file"):
        build(config)


@needs_mkdocs
def test_docstring_extension_converts_sphinx_roles():
    spec = importlib.util.spec_from_file_location("docstrings_ext", DOCS / "_ext" / "docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import griffe

    package = griffe.load("tabmoe.data.splits", search_paths=[str(ROOT)])
    convert = module.roles_to_markdown
    assert convert(package, ":class:`~tabmoe.data.splits.SplitDefinition`") == (
        "[`SplitDefinition`][tabmoe.data.splits.SplitDefinition]"
    )
    assert convert(package, ":func:`check_split`") == "[`check_split()`][tabmoe.data.splits.check_split]"
    assert convert(package, ":class:`~sklearn.cluster.KMeans`") == "`KMeans`"


@needs_mkdocs
def test_docstring_extension_reads_attribute_comments():
    """Attributes documented by ``#:`` comments (Sphinx's way) rendered with no text on the
    API pages, which read griffe's docstrings: tabmoe.PAPER_CONFIG (in tabmoe.__all__) and
    the AUTO_* rules beside it on the estimator page among them."""
    spec = importlib.util.spec_from_file_location("docstrings_ext", DOCS / "_ext" / "docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import griffe

    extensions = griffe.load_extensions(module.SphinxNumpyDocstrings())
    config = griffe.load("tabmoe._paper_config", search_paths=[str(ROOT)], extensions=extensions)
    for name in ("PAPER_CONFIG", "PAPER_ARCHITECTURE", "PAPER_TRAINING"):
        assert config[name].docstring is not None, name
    assert config["PAPER_CONFIG"].docstring.value.startswith("The paper's exact configuration")
    # a Sphinx role in a comment becomes a cross-reference, as in a docstring
    assert "[`paper_config()`][tabmoe._paper_config.paper_config]" in config["PAPER_CONFIG"].docstring.value
    assert config["AUTO_EARLY_STOPPING_ROWS"].docstring.value.startswith(
        '``early_stopping="auto"`` turns early stopping on above this many training rows\n'
    )


BROWSERS = ("chromium", "chromium-browser", "google-chrome")
#: The pages a newcomer opens first: (page, its h1, images it must show).
FIRST_PAGES = [
    ("./", "tabmoe", 0),
    ("installation/", "Installation", 0),
    ("quickstart/", "Quick start", 1),
    ("results/", "Results", 0),
    ("results-paper/", None, 0),
    ("results-openml-ood/", None, 2),
    ("moe/", "The MoE view: experts, gates, explanations", 1),
]
_CHECK_PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
</head><body><pre id="out">pending</pre><script>
const pages = PAGES, results = [];
function report() { document.getElementById("out").textContent = JSON.stringify(results); }
pages.forEach(function (page, k) {
  const frame = document.createElement("iframe");
  frame.style.width = "1280px"; frame.style.height = "4000px";
  frame.addEventListener("load", function () {
    const doc = frame.contentDocument, h1 = doc.querySelector("article h1, h1");
    results[k] = {page: page, title: doc.title, h1: h1 ? h1.textContent.replace("\u00b6", "").trim() : null,
      text: doc.body ? doc.body.innerText.length : 0,
      images: Array.from(doc.querySelectorAll("article img")).map(function (img) {
        return {src: img.getAttribute("src"), complete: img.complete, width: img.naturalWidth}; })};
    report();
  });
  frame.src = page;
  document.body.appendChild(frame);
});
</script></body></html>"""


@pytest.mark.slow  # renders the whole site (mkdocs build, 14 s); CI's mkdocs step builds it too
@needs_mkdocs
@pytest.mark.skipif(not any(shutil.which(b) for b in BROWSERS), reason="no Chromium on this machine")
def test_first_pages_render_in_headless_chromium(site):
    """Index, installation, quick start, the results pages and the MoE page, served over HTTP
    and opened in headless Chromium: each shows its heading and text, every image in the
    article loads (naturalWidth > 0), and no request of any page gets a 404."""
    import functools
    import html
    import json
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    browser = next(shutil.which(b) for b in BROWSERS if shutil.which(b))
    requests: list[tuple[str, int]] = []

    class Handler(SimpleHTTPRequestHandler):
        def log_request(self, code="-", size="-"):
            requests.append((self.path, int(getattr(code, "value", code))))

        def log_message(self, *args):
            pass

    pages = [page for page, _, _ in FIRST_PAGES]
    (site / "_first_pages.html").write_text(_CHECK_PAGE.replace("PAGES", json.dumps(pages)), encoding="utf8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/_first_pages.html"
        result = subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--virtual-time-budget=30000", "--dump-dom", url],
            capture_output=True, text=True, timeout=180,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<pre id="out">(.*?)</pre>', result.stdout, flags=re.S)
    assert match and match.group(1) != "pending", result.stdout[-2000:]
    rendered = json.loads(html.unescape(match.group(1)))
    assert [r["page"] if r else None for r in rendered] == pages, rendered
    for (page, heading, n_images), seen in zip(FIRST_PAGES, rendered, strict=True):
        assert seen["h1"], (page, seen)
        if heading is not None:
            assert seen["h1"] == heading, (page, seen["h1"])
        assert seen["text"] > 500, (page, seen["text"])
        assert len(seen["images"]) >= n_images, (page, seen["images"])
        for image in seen["images"]:
            assert image["complete"] and image["width"] > 0, (page, image)
    missing = sorted({path for path, code in requests if code >= 400})
    assert not missing, f"requests that failed: {missing}"
    assert any(path.endswith(".png") for path, _ in requests)


def test_tuning_examples_run(capsys):
    """The Python examples of docs/tuning.md run as written (one shared namespace, in order)."""
    text = (DOCS / "tuning.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOCS / "tuning.md"), "exec"), namespace)
    assert namespace["search"].best_params_.keys() == {"d_model", "learning_rate"}
    result = namespace["result"]
    assert set(result.best_params) == {"d_model", "dropout"} and len(result.study.trials) == 2
    assert namespace["weighted"].best_params.keys() == {"d_model"}
    assert "number" in capsys.readouterr().out


def test_moe_page_example_runs(capsys):
    """The code of docs/moe.md section 1 runs as written, and its comments hold."""
    import torch

    text = (DOCS / "moe.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "MixtureOfExperts" in b]
    namespace: dict = {}
    exec(compile(block, str(DOCS / "moe.md"), "exec"), namespace)
    moe, tokens, clf = namespace["moe"], namespace["tokens"], namespace["clf"]
    with torch.no_grad():
        expected = clf.module_.label_logits(tokens)
        assert (moe.logits(tokens, clf.module_.label_ids) - expected).abs().max() <= 1e-5
        assert moe.logits(tokens, namespace["ids_of_column_2"], target=2).shape == (
            len(tokens), len(namespace["ids_of_column_2"]))
