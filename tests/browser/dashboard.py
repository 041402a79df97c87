#!/usr/bin/python3
"""Drive the conformance dashboard in headless Chromium, as a user would.

Usage: /usr/bin/python3 tests/browser/dashboard.py SITE_DIR SCREENSHOT.png [CHROMIUM]

Run by tests/conformance.rs (html::site_in_chromium) on a site written from
the locate and lookup cases. Through Selenium and chromedriver (Debian's
python3-selenium and chromium-driver, installed by tools/setup) it:

1. loads index.html and checks the matrix rendered (pass cells, a column
   per implementation, every cell's outcome written out);
2. clicks the `locate` filter and checks the page lists only locate cases;
3. clicks a case link and checks the case page (input dump, verdicts);
4. goes back and works the keyboard: Tab reaches the first link with a
   visible focus outline, and Enter on the next one opens its page;
5. opens an implementation page, checks its rows come failures first,
   and uses the CSS-only state filter ("passing", then "all");
6. with DASHBOARD_CHANGED_CASE and DASHBOARD_CHANGED_IMPL set, opens
   compare.html and checks the score that changed (+1), the rule table,
   history.html and the score that rose in the last of three runs,
   and the changed case's row and link, both reached from the index's links;
7. with DASHBOARD_WHY_CASE set, checks that case's page says why its
   divergence is documented (DASHBOARD_WHY_TEXT);
8. takes a screenshot of the matrix.

Exits 0 when every check holds; 1 with the failed check on stderr; 2 when
Selenium or chromedriver is missing (run tools/setup).
"""

import os
import sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
except ImportError:
    sys.exit(print("python3-selenium is not installed: run tools/setup", file=sys.stderr) or 2)

CHROMEDRIVER = "/usr/bin/chromedriver"


def check(ok, what):
    if not ok:
        print(f"dashboard: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    site, shot = sys.argv[1], sys.argv[2]
    if not os.path.exists(CHROMEDRIVER):
        print(f"{CHROMEDRIVER} is missing: run tools/setup (Debian package chromium-driver)", file=sys.stderr)
        sys.exit(2)
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,800"):
        opts.add_argument(a)
    opts.binary_location = sys.argv[3] if len(sys.argv) > 3 else "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        index = "file://" + os.path.abspath(os.path.join(site, "index.html"))
        driver.get(index)
        # 1. The matrix.
        cells = driver.find_elements(By.CSS_SELECTOR, "td.pass")
        check(len(cells) > 10, f"the matrix has {len(cells)} pass cells")
        heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "th")]
        check(any("offload-kit-strict" in h for h in heads), f"no offload-kit-strict column in {heads[:12]}")
        check(all(c.text.strip() for c in cells[:50]), "a pass cell shows no outcome text (colour alone)")
        # 2. The format filter.
        driver.find_element(By.LINK_TEXT, "locate").click()
        check(driver.current_url.endswith("group-locate.html"), f"the locate filter led to {driver.current_url}")
        links = [a.text for a in driver.find_elements(By.CSS_SELECTOR, "a[href^='case/']")]
        check(links and all(t.startswith("locate/") for t in links),
              f"the locate page lists other cases: {[t for t in links if not t.startswith('locate/')][:3]}")
        # 3. A case link.
        driver.find_element(By.LINK_TEXT, "locate/fatbin-0").click()
        check(driver.current_url.endswith("case/locate/fatbin-0.html"), f"the case link led to {driver.current_url}")
        body = driver.find_element(By.TAG_NAME, "body").text
        check("Input host" in body, "the case page has no input dump")
        check("offload-kit-strict: pass" in body, "the case page has no offload-kit-strict verdict")
        # 4. The keyboard.
        driver.back()
        driver.back()
        check(driver.current_url == index, f"back twice led to {driver.current_url}")
        body_el = driver.find_element(By.TAG_NAME, "body")
        body_el.send_keys(Keys.TAB)
        first = driver.switch_to.active_element
        check(first.tag_name == "a", f"Tab focused a <{first.tag_name}>, not the first link")
        outline = first.value_of_css_property("outline-style")
        check(outline not in ("", "none"), f"the focused link shows no focus outline ({outline!r})")
        first.send_keys(Keys.TAB)
        second = driver.switch_to.active_element
        target = second.get_attribute("href")
        second.send_keys(Keys.ENTER)
        check(driver.current_url == target, f"Enter on {target} led to {driver.current_url}")
        # 5. An implementation page: failures first, and the state filter.
        driver.get("file://" + os.path.abspath(os.path.join(site, "impl-offload-kit-strict.html")))
        rows = driver.find_elements(By.CSS_SELECTOR, "tbody tr")
        order = {"failing": 0, "documented": 1, "bug": 2, "pass": 3, "na": 4}
        ranks = [order[r.get_attribute("class")] for r in rows]
        check(rows and ranks == sorted(ranks), f"the rows are not failures first: {ranks[:20]}")
        passing = [l for l in driver.find_elements(By.CSS_SELECTOR, "p.show a") if l.text.startswith("passing")]
        check(passing, "no 'passing' filter link")
        passing[0].click()
        shown = [r for r in rows if r.is_displayed()]
        check(shown and all(r.get_attribute("class") == "pass" for r in shown),
              f"the 'passing' filter shows {[r.get_attribute('class') for r in shown][:5]}")
        check(len(shown) == ranks.count(3), f"the 'passing' filter shows {len(shown)} of {ranks.count(3)} rows")
        check(driver.find_element(By.CSS_SELECTOR, "thead tr").is_displayed(), "the filter hid the table head")
        driver.find_element(By.PARTIAL_LINK_TEXT, "all (").click()
        check(all(r.is_displayed() for r in rows), "'all' does not show every row again")
        # 6. The comparison with an earlier run (compare.html): the pass
        # score that changed, the rule, and the changed case linked to its page.
        case, impl = os.environ.get("DASHBOARD_CHANGED_CASE"), os.environ.get("DASHBOARD_CHANGED_IMPL")
        if case:
            # Reached from the index, as a user finds it.
            driver.get(index)
            driver.find_element(By.LINK_TEXT, "what changed").click()
            check(driver.current_url.endswith("/compare.html"), f"the index's link opened {driver.current_url}")
            scores = [[td.text for td in tr.find_elements(By.CSS_SELECTOR, "th, td")]
                      for tr in driver.find_elements(By.CSS_SELECTOR, "#scores tbody tr")]
            check(any(r[0] == impl and r[-1] == "+1" for r in scores), f"the score table shows {scores}")
            check(driver.find_elements(By.CSS_SELECTOR, "#rules tbody tr"), "the rule table is empty")
            rows = driver.find_elements(By.CSS_SELECTOR, "#changes tbody tr")
            check(len(rows) == 1 and impl in rows[0].text and "DIFF" in rows[0].text and "pass" in rows[0].text,
                  f"the changed cases are {[r.text for r in rows]}")
            rows[0].find_element(By.TAG_NAME, "a").click()
            check(case in driver.title or case in driver.page_source, "the changed case's link did not open its page")
            # The scores over three runs (history.html): the implementation's
            # score rose in the last run only.
            driver.get(index)
            driver.find_element(By.LINK_TEXT, "history").click()
            heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#history thead th")]
            check(heads[2:] == ["first.json", "earlier.json", "this run"], f"the history's runs are {heads}")
            rose = [tr for tr in driver.find_elements(By.CSS_SELECTOR, "#history tbody tr")
                    if tr.find_element(By.TAG_NAME, "th").text == impl
                    and tr.find_elements(By.CSS_SELECTOR, "td.pass")]
            check(len(rose) == 1, f"{len(rose)} rows of {impl} rose")
            cells = rose[0].find_elements(By.TAG_NAME, "td")
            check(cells[1].text == cells[2].text and cells[3].get_attribute("class") == "pass",
                  f"the history row is {[c.text for c in cells]}")
        # 7. A documented divergence says why on its case page.
        why_case, why_text = os.environ.get("DASHBOARD_WHY_CASE"), os.environ.get("DASHBOARD_WHY_TEXT")
        if why_case:
            driver.get("file://" + os.path.abspath(os.path.join(site, "case", why_case + ".html")))
            whys = [p.text for p in driver.find_elements(By.CSS_SELECTOR, "p.why")]
            check(any(why_text in w for w in whys), f"the case page's reasons are {whys}")
        # 8. A screenshot of the matrix.
        driver.get(index)
        check(driver.save_screenshot(shot), "no screenshot")
    finally:
        driver.quit()
    print("dashboard: matrix, filter, case link, keyboard, implementation page, comparison, history and screenshot checked")


if __name__ == "__main__":
    main()
