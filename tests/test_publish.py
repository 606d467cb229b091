"""Ready to publish: the GitHub Pages workflow, and the repository URL kept in one place.

The workflow cannot run here, so it is validated against GitHub's workflow schema (vendored in
check-jsonschema, no network) and checked to run the README's own build commands.
"""

import pathlib
import re
import subprocess
import sys
import urllib.parse

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
sys.path.insert(0, str(ROOT / "scripts"))
import editions  # noqa: E402


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def steps(job):
    return workflow()["jobs"][job]["steps"]


def commands(job):
    """The shell lines a job runs, in order, without blank lines and comments."""
    lines = []
    for step in steps(job):
        lines += [line.strip() for line in step.get("run", "").splitlines()
                  if line.strip() and not line.strip().startswith("#")]
    return lines


def readme_block(heading):
    """The lines of the first bash block under a README heading, without their comments."""
    section = (ROOT / "README.md").read_text().split(f"## {heading}\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def test_workflow_is_valid_for_github():
    for schema in ("vendor.github-workflows", "custom.github-workflows-require-timeout"):
        run = subprocess.run([pathlib.Path(sys.executable).with_name("check-jsonschema"),
                              "--builtin-schema", schema, str(WORKFLOW)], capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


def test_workflow_publishes_main_to_pages():
    flow = workflow()
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == [CONFIG["repository"]["branch"]]
    assert "workflow_dispatch" in triggers
    assert flow["permissions"] == {"contents": "read"}
    upload = [s for s in steps("build") if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "_build/html"
    assert steps("build")[-1] == upload[0], "the upload comes after the build and its checks"
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert [s["uses"] for s in deploy["steps"]] == ["actions/deploy-pages@v4"]


def test_workflow_runs_the_readme_commands():
    run = commands("build")
    setup, build = readme_block("Set-up"), readme_block("Build the book")
    assert "pip install -r requirements.txt" in setup and "pip install -r requirements.txt" in run
    assert run[run.index("pip install -r requirements.txt") + 1:][:len(build)] == build
    assert "pytest tests/test_browser.py" in run  # nothing is published that the browser rejects
    # The PDFs: made by the README's command, read by their tests, published next to the HTML, where
    # the download button looks for them (_static/book.js).
    pdf = readme_block("The book as PDF")
    assert run[run.index(pdf[0]):][:3] == pdf + ["pytest tests/test_pdf.py", "cp -r _build/pdf _build/html/pdf"]
    assert "`pdf/${chapter ? chapter[1] : \"book\"}.pdf`" in (ROOT / "_static" / "book.js").read_text()
    # The pinned stack was made with Python 3.11 (constraints.txt): the workflow uses the same.
    python = [s for s in steps("build") if s.get("uses", "").startswith("actions/setup-python@")]
    assert python[0]["with"]["python-version"] == "3.11"
    assert "Python 3.11" in (ROOT / "constraints.txt").read_text().split("\n\n")[0]


def test_repository_url_lives_in_one_place():
    """Only _config.yml names the repository; the notebooks that do are generated from it."""
    url = CONFIG["repository"]["url"]
    owner_repo = urllib.parse.urlparse(url).path.strip("/")
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    naming = sorted(p for p in tracked if (ROOT / p).is_file() and owner_repo.split("/")[0]
                    in (ROOT / p).read_text(errors="ignore"))
    generated = re.compile(r"(chapters|colab/chapters)/(\d\d|appendix_[a-z])_\w+\.ipynb")
    assert [p for p in naming if not generated.fullmatch(p)] == ["_config.yml"]
    owner, repo = owner_repo.split("/")
    baseurl = CONFIG.get("html", {}).get("baseurl")  # set only to publish elsewhere (README)
    expected = baseurl.rstrip("/") + "/" if baseurl else f"https://{owner.lower()}.github.io/{repo}/"
    assert editions.book_url() == expected
