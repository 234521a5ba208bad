// JSON written as it goes, in the order it is written, as Slurm 23.11's json-c serializer
// prints data_parser trees (two-space indent, `"key": value`, "\/", an empty collection on
// two lines, doubles as "%.17g" with ".0" where that reads as an integer, infinity as
// `Infinity`): for outputs whose key order is the parser's, deep and repeated (sacctmgr
// and sshare --json). One thread (a client's).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hq::cmd {

class JsonStream {
 public:
  // `compact`: no newlines or indent (slurmrestd's long listings; a smaller page to send).
  explicit JsonStream(bool compact = false) : compact_(compact) {}
  // Members of an object take a key; items of an array pass "" (or use the keyless forms).
  JsonStream& object(std::string_view key = {});
  JsonStream& array(std::string_view key = {});
  JsonStream& end();  // closes the innermost object or array
  JsonStream& str(std::string_view key, std::string_view v);
  JsonStream& integer(std::string_view key, int64_t v);
  JsonStream& real(std::string_view key, double v);
  JsonStream& boolean(std::string_view key, bool v);
  JsonStream& item(std::string_view v) { return str({}, v); }
  // Room for `bytes` of text (a long listing grows without copies into fresh pages).
  void reserve(size_t bytes) { out_.reserve(bytes); }
  // The text so far, with a newline at the end once everything is closed.
  std::string text() const { return open_.empty() ? out_ + "\n" : out_; }
  // The same, taken (the stream is left empty).
  std::string take() {
    if (open_.empty()) out_ += '\n';
    return std::move(out_);
  }

 private:
  struct Open {
    char closer;              // '}' or ']'
    bool has_member = false;
  };
  void start(std::string_view key);
  JsonStream& open(std::string_view key, char opener, char closer);
  std::string out_;
  std::vector<Open> open_;  // the collections open, innermost last
  bool compact_ = false;
};

// Slurm 23.11's "%.17g" double, with ".0" added to what reads as an integer.
std::string json_real(double v);

}  // namespace hq::cmd
