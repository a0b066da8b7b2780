"""Interactive reruns: `make lab`, the Binder and Colab launch buttons and their environments.

- ``make lab`` starts JupyterLab headless on 127.0.0.1 (a free port, a token): its API answers
  only with the token, serves the chapter notebooks of ``notebooks/``, offers the kernel
  ``ldp`` (this venv's Python), and a kernel started through it imports ``ldp`` with the
  lab's figure folder; the server then shuts down through its API.
- Every chapter page of the built book carries Binder and Colab buttons that open the
  chapter's *source* notebook in the repository named in ``_config.yml``.
- The files those services read list what ``make book`` installs: ``binder/`` (Python 3.11,
  the pinned ``requirements.txt``, the package and the kernel) and the Colab cell the rerun
  page documents.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
REPO = CONFIG["repository"]["url"]
BRANCH = CONFIG["repository"]["branch"]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
STARTUP = 300  # seconds the lab may take to answer on a loaded machine (a liveness bound, not a measurement)


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _api(port: int, path: str, token: str | None, method: str = "GET", body: dict | None = None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"token {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - our own local server
        text = response.read().decode()
        return response.status, (json.loads(text) if text else None)


# --------------------------------------------------------------------------- #
# make lab
# --------------------------------------------------------------------------- #
@contextlib.contextmanager
def running_lab(home: Path):
    """`make lab` on a free port with a token; yields (port, token, process); always ends it."""
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ,
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "ws")}
    args = f"--no-browser --ServerApp.port={port} --ServerApp.port_retries=0 --IdentityProvider.token={token}"
    log_path = home / "lab.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"], cwd=ROOT, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + STARTUP
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"make lab exited ({proc.returncode}):\n{log_path.read_text()[-3000:]}")
                try:
                    if _api(port, "/api/status", token)[0] == 200:
                        break
                except (urllib.error.URLError, ConnectionError, OSError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"the lab did not answer on port {port}:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.5)
            yield port, token, proc
        finally:
            if proc.poll() is None:
                try:
                    _api(port, "/api/shutdown", token, method="POST")
                    proc.wait(timeout=60)
                except (urllib.error.URLError, ConnectionError, OSError, subprocess.TimeoutExpired):
                    os.killpg(proc.pid, signal.SIGTERM)  # the process group this test started
                    proc.wait(timeout=60)


def _run_in_kernel(port: int, token: str, kernel_id: str, code: str) -> str:
    """Run ``code`` in a kernel of the lab (the kernel protocol over its websocket); what it printed."""
    import websocket  # websocket-client, pinned in requirements.txt

    ws = websocket.create_connection(f"ws://127.0.0.1:{port}/api/kernels/{kernel_id}/channels",
                                     header=[f"Authorization: token {token}"], timeout=STARTUP)
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test",
                       "session": uuid.uuid4().hex, "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        printed = ""
        while True:
            message = json.loads(ws.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "stream":
                printed += message["content"]["text"]
            elif message["msg_type"] == "error":
                pytest.fail("\n".join(message["content"]["traceback"]))
            elif message["msg_type"] == "execute_reply":
                assert message["content"]["status"] == "ok", message["content"]
                return printed
    finally:
        ws.close()


def test_make_lab_headless(tmp_path):
    """`make lab`: token required, the chapter notebooks, the `ldp` kernel running ldp, a clean shutdown."""
    if not (ROOT / ".venv" / "bin" / "jupyter-lab").is_file():
        _unavailable("JupyterLab is not in .venv: `make setup` installs it (requirements.txt)")
    import ldp

    with running_lab(tmp_path) as (port, token, proc):
        # only with the token
        with pytest.raises(urllib.error.HTTPError) as refused:
            _api(port, "/api/contents", None)
        assert refused.value.code == 403
        # the chapter notebooks, at the lab's root
        status, listing = _api(port, "/api/contents", token)
        assert status == 200
        notebooks = sorted(i["name"][:-len(".ipynb")] for i in listing["content"] if i["type"] == "notebook")
        assert notebooks == CHAPTERS
        assert _api(port, f"/api/contents/{CHAPTERS[0]}.ipynb?content=0", token)[1]["type"] == "notebook"
        # the kernel the notebooks name: this venv's Python
        _, specs = _api(port, "/api/kernelspecs", token)
        assert "ldp" in specs["kernelspecs"], sorted(specs["kernelspecs"])
        assert Path(specs["kernelspecs"]["ldp"]["spec"]["argv"][0]) == ROOT / ".venv" / "bin" / "python"
        # a kernel started through the lab imports ldp and sees the lab's figure folder
        _, kernel = _api(port, "/api/kernels", token, method="POST", body={"name": "ldp"})
        try:
            printed = _run_in_kernel(port, token, kernel["id"], "import os, ldp; print(ldp.__version__, "
                                     "os.environ['LDP_FIGURE_DIR'], os.environ['LDP_SHOW_FIGURES'])")
        finally:
            _api(port, f"/api/kernels/{kernel['id']}", token, method="DELETE")
        assert printed.split() == [ldp.__version__, str(ROOT / "my-runs" / "lab" / "figures"), "1"]
        # and it stops through its API
        assert _api(port, "/api/shutdown", token, method="POST")[0] == 200
        assert proc.wait(timeout=STARTUP) == 0


# --------------------------------------------------------------------------- #
# launch buttons
# --------------------------------------------------------------------------- #
def _launch_links(chapter: str) -> list[str]:
    page = HTML / "_generated" / "notebooks" / f"{chapter}.html"
    if not page.is_file():
        _unavailable(f"{page} missing: run `make book QUICK=1` (make test does)")
    text = page.read_text(encoding="utf-8")
    return re.findall(r'<a href="([^"]+)" target="_blank"\s+class="btn btn-sm dropdown-item"', text)


def test_launch_buttons_are_configured():
    buttons = CONFIG["launch_buttons"]
    assert buttons["binderhub_url"] == "https://mybinder.org"
    assert buttons["colab_url"] == "https://colab.research.google.com"
    assert buttons["notebook_interface"] == "jupyterlab"
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", REPO), REPO


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_launch_buttons_open_the_source_notebook(chapter: str):
    org_repo = REPO.removeprefix("https://github.com/")
    links = _launch_links(chapter)
    binder = f"https://mybinder.org/v2/gh/{org_repo}/{BRANCH}?urlpath=lab/tree/notebooks/{chapter}.ipynb"
    colab = f"https://colab.research.google.com/github/{org_repo}/blob/{BRANCH}/notebooks/{chapter}.ipynb"
    assert binder in links, links
    assert colab in links, links
    assert not [link for link in links if "_generated" in link]
    assert (ROOT / "notebooks" / f"{chapter}.ipynb").is_file()


def test_pages_without_a_notebook_have_no_launch_buttons():
    page = HTML / "book" / "cite.html"
    if not page.is_file():
        _unavailable(f"{page} missing: run `make book QUICK=1` (make test does)")
    assert "mybinder.org" not in page.read_text(encoding="utf-8")


# --------------------------------------------------------------------------- #
# what Binder and Colab install = what make book installs
# --------------------------------------------------------------------------- #
def _requirements(path: Path) -> list[str]:
    """Requirement lines of a pip requirements file, following ``-r`` includes."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            lines += _requirements(path.parent / line[3:].strip())
        elif line:
            lines.append(line)
    return lines


def test_binder_installs_the_pinned_requirements():
    assert _requirements(ROOT / "binder" / "requirements.txt") == _requirements(ROOT / "requirements.txt")
    assert all("==" in line for line in _requirements(ROOT / "requirements.txt"))


def test_binder_python_is_the_projects():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    python = re.search(r"^PYTHON \?= python(\d+\.\d+)$", makefile, re.M).group(1)
    assert (ROOT / "binder" / "runtime.txt").read_text(encoding="utf-8").strip() == f"python-{python}"
    ci = (ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    assert f"image: python:{python}-" in ci


def test_binder_post_build_does_what_make_setup_does():
    post = ROOT / "binder" / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "--no-deps -e ." in makefile and "-m ldp kernel" in makefile  # what make setup does ...
    assert re.search(r"pip install --no-deps .*-e \.", text)            # ... and postBuild too
    assert "python -m ldp kernel" in text


def test_colab_cell_installs_what_make_setup_installs():
    page = (ROOT / "book" / "rerun.md").read_text(encoding="utf-8")
    cell = re.search(r"```ipython3\n(.*?git clone.*?)```", page, re.S)
    assert cell, "book/rerun.md lacks the Colab cell"
    lines = [line.strip() for line in cell.group(1).splitlines()]
    assert lines[0].startswith(f"!git clone --depth 1 {REPO} ")
    folder = lines[0].split()[-1]
    assert lines[1] == f"%cd {folder}"
    assert lines[2] == "!pip install -q -r requirements.txt && pip install -q --no-deps -e ."
