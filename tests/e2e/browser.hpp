// A real browser for end-to-end tests of the web dashboard: Debian's headless Chromium,
// driven over the Chrome DevTools Protocol (a WebSocket, Boost.Beast's client; only
// browser.cpp includes it): load a page, evaluate JavaScript in it as a person's clicks
// would act, wait for what the page shows, and take PNG screenshots. One thread.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>

namespace hq::test {

class Browser {
 public:
  // Starts Chromium with a fresh profile in `dir` (its log in dir/chromium.log); ok() says
  // whether it runs, why() why not (no chromium on this machine, it did not start).
  explicit Browser(const std::string& dir);
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  bool ok() const { return impl_ != nullptr; }
  const std::string& why() const { return why_; }

  // Loads `url` in the page (returns once the navigation started).
  bool navigate(const std::string& url);
  // The value of JavaScript expression `js` in the page (a promise is awaited) as JSON text
  // ("true", "\"text\"", "3"), or "" when it threw or the browser did not answer.
  std::string eval(const std::string& js);
  // Waits (bounded) until `js` evaluates to true. Every answer from the browser is waited
  // for 30 s at most.
  bool wait_true(const std::string& js, double seconds);
  // Writes the page as it looks now to `png_path`; false when it could not.
  bool screenshot(const std::string& png_path);

 private:
  struct Impl;
  std::string call(const std::string& method, const std::string& params_json);
  bool read_within(std::string& text, double seconds);
  pid_t pid_ = -1;
  std::string why_;
  std::unique_ptr<Impl> impl_;
};

// Why a browser test cannot run here ("" when it can): no chromium on the PATH.
std::string why_no_browser();

}  // namespace hq::test
