"""The results board in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by
Selenium loads a tiny bench run's ``board.html`` from a file, with no network."""

from __future__ import annotations

import shutil
import time

import pytest

from privbandit import cli
from privbandit.report.files import read_cell

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1366,900")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("board") / "run"
    code = cli.main(["bench", "--suite", "quick", "--out", str(out), "--seeds", "2", "--horizon", "1024", "--agents",
                     "elim-jdp,elim-jdp-ucb,elim-nonprivate,uniform,elim-ucb", "--envs", "heavy-tailed-d5k5",
                     "--epsilons", "0.3,1", "--jobs", "1", "--no-progress"])
    assert code == 0 and (out / "board.html").is_file()
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + (f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))  # no driver download
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page(run, browser):
    browser.get((run / "board.html").resolve().as_uri())
    deadline = time.monotonic() + 60
    while browser.execute_script("return document.body && document.body.getAttribute('data-ready')") != "true":
        assert time.monotonic() < deadline, "the page never finished drawing"
        time.sleep(0.1)
    return browser


def _traces(driver, plot: str) -> list[dict]:
    return driver.execute_script(f"return document.getElementById('{plot}').data.map("
                                 "t => ({name: t.name, meta: t.meta, y: t.y, legend: t.showlegend !== false,"
                                 " visible: t.visible === undefined ? true : t.visible}))")


def test_the_page_loads_without_a_console_error(page):
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def test_every_agent_of_the_results_is_named(run, page):
    agents = set(read_cell(run / "results.csv")["agent"])
    text = page.find_element("id", "leaderboard-section").text
    assert all(a in text for a in agents)
    legend = {e.text for e in page.find_elements("css selector", "#board-plot .legendtext")}
    board_agents = {t["meta"] for t in _traces(page, "board-plot")}
    assert board_agents == {a for a in agents if a != "elim-ldp"} and len(legend) == len(board_agents)


def test_the_figures_are_drawn(page):
    for plot in ("board-plot", "price-eps-plot", "price-curves-plot"):
        drawn = page.execute_script(f"return document.querySelectorAll('#{plot} .scatterlayer .trace path.js-line')"
                                    ".length")
        assert drawn > 0, plot


def test_moving_the_slider_changes_a_trace(page):
    from selenium.webdriver.common.keys import Keys

    before = _traces(page, "price-curves-plot")
    label = page.find_element("id", "eps-value").text
    slider = page.find_element("id", "eps-slider")
    slider.send_keys(Keys.END if slider.get_attribute("value") == "0" else Keys.HOME)
    after = _traces(page, "price-curves-plot")
    assert page.find_element("id", "eps-value").text != label
    private = [i for i, t in enumerate(before) if "at epsilon" in t["name"] and t["legend"]]
    assert private and any(before[i]["y"] != after[i]["y"] for i in private)


def test_clicking_the_legend_hides_an_agent(page):
    from selenium.webdriver.common.action_chains import ActionChains

    traces = _traces(page, "board-plot")
    first = next(t for t in traces if t["legend"])
    drawn = page.execute_script("return document.querySelectorAll('#board-plot .scatterlayer .trace').length")
    toggle = page.find_elements("css selector", "#board-plot .legend .traces .legendtoggle")[0]
    ActionChains(page).move_to_element(toggle).click().perform()
    time.sleep(0.5)
    hidden = [t for t in _traces(page, "board-plot") if t["meta"] == first["meta"]]
    assert hidden and all(t["visible"] == "legendonly" for t in hidden)
    assert page.execute_script("return document.querySelectorAll('#board-plot .scatterlayer .trace').length") < drawn
    ActionChains(page).move_to_element(toggle).click().perform()  # and back
    time.sleep(0.5)
    assert all(t["visible"] is True for t in _traces(page, "board-plot") if t["meta"] == first["meta"])


def test_the_log_axes_and_the_private_only_view(page):
    page.find_element("id", "board-logx").click()
    assert page.execute_script("return document.getElementById('board-plot').layout.xaxis.type") == "linear"
    page.find_element("id", "board-logx").click()
    assert page.execute_script("return document.getElementById('board-plot').layout.xaxis.type") == "log"
    page.find_element("id", "private-only").click()
    shown = {t["meta"] for t in _traces(page, "board-plot")}
    assert shown == {"elim-jdp", "elim-jdp-ucb", "uniform"}
    page.find_element("id", "private-only").click()


def test_the_leaderboard_sorts_and_links_to_its_board(page):
    headers = page.find_elements("css selector", "#leaderboard thead th")
    col = next(i for i, h in enumerate(headers) if h.text.startswith("final regret"))

    def regrets():
        return [float(r.find_elements("css selector", "td")[col].text.split()[0])
                for r in page.find_elements("css selector", "#leaderboard tbody tr")]
    header = headers[col]
    header.click()
    up = regrets()
    header.click()
    assert up == sorted(up) and regrets() == sorted(up, reverse=True)
    links = page.find_elements("css selector", "#leaderboard tbody a")
    target = links[-1].text
    page.execute_script("arguments[0].click()", links[-1])
    assert page.find_element("css selector", "#board-head h3").text == target
