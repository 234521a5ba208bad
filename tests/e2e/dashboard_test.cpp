// End to end: the web dashboard in a real browser (headless Chromium, tests/e2e/browser.*)
// against a live cluster, checked for what a person would see: job rows appear, the cancel
// button cancels, a node drained from the page changes colour, a job's page shows its
// output; another user sees the queue without buttons on jobs that are not theirs. PNG
// screenshots of each view are left in <build>/t/screenshots for a human to look at.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "browser.hpp"
#include "http_fixture.hpp"

using namespace hq::test;

namespace {

std::string row(const std::string& id) { return "document.querySelector('tr[data-job=\"" + id + "\"]')"; }
std::string tile(const std::string& node) { return "document.querySelector('[data-node=\"" + node + "\"]')"; }

std::string screenshots_dir() {
  std::string dir = test_tmp_root() + "/screenshots";
  std::filesystem::create_directories(dir);
  return dir;
}

// A PNG of some size: its signature and more than a blank page's bytes.
bool looks_like_png(const std::string& path) {
  std::string bytes = slurp(path);
  return bytes.size() > 5000 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

}  // namespace

TEST_CASE("e2e: the dashboard in Chromium - job rows appear, cancel cancels, a drained node changes colour") {
  if (std::string why = why_no_browser(); !why.empty()) HQ_SKIP(why);
  LocalCluster c(2, 2, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  auto link = c.hq("token --url");
  REQUIRE(link.rc == 0);
  std::string url = trimmed(link.out);
  REQUIRE(url.find("/ui/#token=") != std::string::npos);
  Browser b(c.dir());
  REQUIRE_MESSAGE(b.ok(), b.why());
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\necho from-dashboard-job\n" << until_file("never") << "\n";
  std::string id = c.submit("-N1 -J shown hold.sh");
  std::string shots = screenshots_dir();

  REQUIRE(b.navigate(url));
  CHECK(b.wait_true(row(id) + " !== null", 20));
  CHECK(b.wait_true(row(id) + ".dataset.state === 'RUNNING'", 30));
  CHECK(b.eval("document.getElementById('who').textContent").find("root (admin)") != std::string::npos);
  CHECK(b.eval(row(id) + ".textContent").find("shown") != std::string::npos);
  CHECK(b.screenshot(shots + "/queue.png"));
  // The text filter: rows go as it is typed, and the field keeps the focus across refreshes.
  std::string text_filter = "document.querySelector('[data-filter=\"text\"]')";
  CHECK(b.eval(text_filter + ".focus(); " + text_filter + ".value = 'nomatch'; " + text_filter +
               ".dispatchEvent(new Event('input')); true") == "true");
  CHECK(b.wait_true(row(id) + " === null", 10));
  CHECK(b.wait_true("document.querySelector('#queue-empty') !== null", 10));
  CHECK(b.eval("document.activeElement === " + text_filter) == "true");
  CHECK(b.eval(text_filter + ".value = ''; " + text_filter + ".dispatchEvent(new Event('input')); true") == "true");
  CHECK(b.wait_true(row(id) + " !== null", 10));

  // The job's page: its state, history and output.
  CHECK(b.eval("location.hash = '#/job/" + id + "'; true") == "true");
  CHECK(b.wait_true("document.querySelector('#output') !== null && document.querySelector('#output').textContent.includes('from-dashboard-job')", 20));
  CHECK(b.eval("document.querySelector('#timeline').textContent").find("started") != std::string::npos);
  CHECK(b.eval("[...document.querySelectorAll('dl.kv dt')].map((e) => e.textContent + '=' + e.nextSibling.textContent).join(';')")
            .find("name=shown;user=root") != std::string::npos);
  CHECK(b.screenshot(shots + "/job.png"));

  // Cancel from the queue.
  CHECK(b.eval("location.hash = '#/queue'; true") == "true");
  REQUIRE(b.wait_true(row(id) + " !== null && " + row(id) + ".querySelector('button.cancel') !== null", 20));
  CHECK(b.eval("window.confirm = () => true; " + row(id) + ".querySelector('button.cancel').click(); true") == "true");
  CHECK(c.wait_state(id, "CANCELLED", 30));
  CHECK(b.wait_true(row(id) + " === null", 20));  // gone from the active jobs

  // Nodes: drain e2 from the page; its tile changes colour.
  CHECK(b.eval("location.hash = '#/nodes'; true") == "true");
  REQUIRE(b.wait_true(tile("e2") + " !== null", 20));
  std::string style = "(getComputedStyle(" + tile("e2") + ").backgroundImage + getComputedStyle(" + tile("e2") + ").backgroundColor)";
  std::string before = b.eval(style);
  CHECK(b.eval(tile("e2") + ".dataset.state") == "\"idle\"");
  CHECK(b.eval(tile("e2") + ".click(); selectedNode") == "\"e2\"");
  REQUIRE(b.wait_true("document.querySelector('#node-panel button.drain') !== null", 10));
  CHECK(b.eval("window.prompt = () => 'from the dashboard'; document.querySelector('#node-panel button.drain').click(); true") == "true");
  CHECK(b.wait_true(tile("e2") + " !== null && " + tile("e2") + ".dataset.state === 'drain'", 20));
  CHECK(b.eval(style) != before);
  CHECK(c.hq("nodes").out.find("drain") != std::string::npos);
  CHECK(b.eval("document.querySelector('#node-group').value = 'block'; document.querySelector('#node-group').dispatchEvent(new Event('change')); true") == "true");
  CHECK(b.wait_true("document.querySelector('[data-group=\"(no block)\"]') !== null", 10));
  CHECK(b.screenshot(shots + "/nodes.png"));

  // The scheduler's recent passes.
  CHECK(b.eval("location.hash = '#/scheduler'; true") == "true");
  CHECK(b.wait_true("document.querySelectorAll('#passes tbody tr').length > 0", 20));
  CHECK(b.screenshot(shots + "/scheduler.png"));
  for (const char* name : {"queue", "job", "nodes", "scheduler"}) {
    CAPTURE(name);
    CHECK(looks_like_png(shots + "/" + name + ".png"));
  }
}

TEST_CASE("e2e: the dashboard for another user - others' jobs without buttons, no node actions, no sign-in without a token") {
  if (std::string why = why_no_browser(); !why.empty()) HQ_SKIP(why);
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  std::ofstream(shared + "/mine.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  auto theirs = as_user(65534, shared, "submit --parsable -t 5 mine.sh");
  REQUIRE(theirs.rc == 0);
  std::string their_job = trimmed(theirs.out);
  std::ofstream(c.dir() + "/root.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string root_job = c.submit("root.sh");
  auto link = as_user(65534, shared, "token --url");
  REQUIRE(link.rc == 0);
  Browser b(c.dir());
  REQUIRE_MESSAGE(b.ok(), b.why());

  // Without a token the page asks for one, and shows no data.
  std::string bare = trimmed(link.out).substr(0, trimmed(link.out).find('#'));
  REQUIRE(b.navigate(bare));
  CHECK(b.wait_true("document.querySelector('#token-input') !== null", 20));
  CHECK(b.eval("document.querySelector('#queue') === null") == "true");

  REQUIRE(b.navigate(trimmed(link.out)));
  CHECK(b.wait_true(row(their_job) + " !== null && " + row(root_job) + " !== null", 20));
  CHECK(b.eval("document.getElementById('who').textContent").find("nobody") != std::string::npos);
  CHECK(b.eval(row(their_job) + ".querySelector('button.cancel') !== null") == "true");
  CHECK(b.eval(row(root_job) + ".querySelector('button') === null") == "true");
  CHECK(b.eval("location.hash = '#/nodes'; true") == "true");
  REQUIRE(b.wait_true(tile("e1") + " !== null", 20));
  CHECK(b.eval(tile("e1") + ".classList.contains('admin')") == "false");
  CHECK(b.eval("document.querySelector('main').innerText.includes('null')") == "false");
  CHECK(b.eval(tile("e1") + ".click(); selectedNode") == "\"\"");  // a user's click picks no node to act on
  CHECK(b.screenshot(screenshots_dir() + "/nodes-as-user.png"));
  c.hq("cancel " + root_job + " " + their_job);
}
